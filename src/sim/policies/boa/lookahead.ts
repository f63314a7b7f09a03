/**
 * When a running job will enter its next statistical epoch, predicted from its profile alone (planners
 * never see the truth). Statistical epochs hold equal shares of a job's progress (how the profiles are
 * cut), so epoch j ends at progress fraction (j + 1) / n; the rest of it takes its share of the epoch's
 * 1-GPU work over the profile's speedup at the job's current width.
 */
import type { ClassProfile } from '../../../core/profile.ts';
import type { JobView } from '../../policy.ts';

export class EpochClock {
  /** Per class and epoch: seconds of the whole epoch at k GPUs, indexed by k (the widest listed <= k). */
  readonly #epochSeconds = new Map<string, Float64Array[]>();

  constructor(classes: readonly ClassProfile[]) {
    for (const cls of classes) {
      this.#epochSeconds.set(
        cls.name,
        cls.epochs.map((epoch) => {
          const listed = Object.keys(epoch.speedup).map(Number);
          const seconds = new Float64Array(Math.max(...listed) + 1);
          let speedup = 1;
          for (let k = 1; k < seconds.length; k++) {
            speedup = epoch.speedup[String(k)] ?? speedup;
            seconds[k] = epoch.workSeconds / speedup;
          }
          return seconds;
        }),
      );
    }
  }

  /** Seconds until `job` leaves its statistical epoch at its current allocation; Infinity if never. */
  secondsToNextEpoch(job: JobView, now: number): number {
    const epochs = this.#epochSeconds.get(job.app);
    const gpus = job.allocation.length;
    const j = job.statEpoch;
    if (epochs === undefined || j >= epochs.length - 1 || gpus === 0) return Number.POSITIVE_INFINITY;
    const seconds = epochs[j] as Float64Array;
    const n = epochs.length;
    const leftOfEpoch = Math.max(0, (j + 1) / n - job.progressFraction) * n;
    const restart = job.restartingUntil === null ? 0 : Math.max(0, job.restartingUntil - now);
    return restart + leftOfEpoch * (seconds[Math.min(gpus, seconds.length - 1)] as number);
  }
}
