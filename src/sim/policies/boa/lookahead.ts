/**
 * When a running job will enter its next statistical epoch, predicted from its profile alone (planners
 * never see the truth). Statistical epochs hold equal shares of a job's progress (how the profiles are
 * cut), so epoch j ends at progress fraction (j + 1) / n; the rest of it takes its share of the epoch's
 * 1-GPU work over the profile's speedup at the job's current width.
 */
import type { ClassProfile } from '../../../core/profile.ts';
import type { JobView } from '../../policy.ts';

export function secondsToNextEpoch(cls: ClassProfile, job: JobView, now: number): number {
  const n = cls.epochs.length;
  const j = job.statEpoch;
  const gpus = job.allocation.length;
  const epoch = cls.epochs[j];
  if (j >= n - 1 || gpus === 0 || epoch === undefined) return Number.POSITIVE_INFINITY;
  const leftOfEpoch = Math.max(0, (j + 1) / n - job.progressFraction) * n;
  const restart = job.restartingUntil === null ? 0 : Math.max(0, job.restartingUntil - now);
  return restart + (leftOfEpoch * epoch.workSeconds) / speedupAtMost(epoch.speedup, gpus);
}

/** The speedup at the widest listed width not above `gpus` (width 1 is always listed). */
function speedupAtMost(table: Readonly<Record<string, number>>, gpus: number): number {
  let best = 1;
  let bestWidth = 1;
  for (const [key, speedup] of Object.entries(table)) {
    const width = Number(key);
    if (width <= gpus && width > bestWidth) {
      best = speedup;
      bestWidth = width;
    }
  }
  return best;
}
