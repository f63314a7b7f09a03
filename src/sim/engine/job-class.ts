import type { ClassProfile } from '../../core/profile.ts';
import { splitDataEpochs } from '../truth/derive.ts';
import type { JobTruth } from '../truth/model.ts';
import type { JobClass } from './job.ts';

export class JobClassError extends Error {
  override name = 'JobClassError';
}

/**
 * A class as the engine runs it: the truth, with statistical epochs ending where the profile's were cut
 * (the same split the profiles were derived with), so a job's reported epoch matches the profile's.
 */
export function jobClassOf(profile: ClassProfile, truth: JobTruth): JobClass {
  const runs = splitDataEpochs(truth.epochEnds, profile.epochs.length);
  if (runs.length !== profile.epochs.length) {
    throw new JobClassError(
      `profile of "${profile.name}" has ${profile.epochs.length} statistical epochs but the job has only ` +
        `${truth.epochEnds.length} data epochs`,
    );
  }
  return {
    truth,
    statEpochEnds: runs.map((run) => truth.epochEnds[run[run.length - 1] as number] as number),
  };
}
