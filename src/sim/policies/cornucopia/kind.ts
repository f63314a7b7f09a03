/**
 * A job's interactive/batch label. The engine labels every job (the trace's `kind`, or the duration rule
 * of src/sim/truth/labels.ts); a view without one is labelled by the same rule on the class profile:
 * interactive when the whole job takes at most 20 minutes at its request.
 */
import type { JobKind, JobView } from '../../policy.ts';
import type { RemainingTime } from '../common/remaining.ts';

export const INTERACTIVE_SECONDS = 20 * 60;

export function jobKind(job: JobView, remaining: RemainingTime): JobKind {
  if (job.kind !== undefined) return job.kind;
  return remaining.wholeSeconds(job.app, job.requestedGpus) <= INTERACTIVE_SECONDS ? 'interactive' : 'batch';
}
