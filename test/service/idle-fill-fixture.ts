/** A deepspeech2 job (2.2x as fast on 4 GPUs as on 1, hours of work) at the start of its run, for the idle fill's tests. */
import type { ServiceJob } from '../../src/service/jobs.ts';

export function deepspeech2Job(
  id: number,
  allocation: string[],
  fields: Partial<ServiceJob> = {},
): ServiceJob {
  return {
    id,
    className: 'deepspeech2',
    statEpoch: 0,
    workDoneSeconds: 0,
    allocation,
    width: allocation.length,
    generationSince: 0,
    ...fields,
  } as unknown as ServiceJob;
}
