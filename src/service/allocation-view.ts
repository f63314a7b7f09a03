import { nodesOf, type ServiceJob } from './jobs.ts';
import { statEpochsOf } from './progress.ts';
import type { BoaService } from './service.ts';

/**
 * What a job's replicas poll and a progress report answers: where it runs, and how many statistical
 * epochs its class has, so a training script need not be told (fake-train's default of 8 had every
 * report of a 2-epoch bert job past its first refused: an operator trial).
 */
export function allocationView(service: BoaService, job: ServiceJob) {
  return {
    jobId: job.id,
    state: job.state,
    width: job.width,
    nodes: nodesOf(job.allocation),
    generation: job.generation,
    statEpoch: job.statEpoch,
    statEpochs: statEpochsOf(service, job.className),
  };
}
