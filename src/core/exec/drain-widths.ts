/**
 * The drain: submissions have stopped (none for `afterHours`) and nothing waits, so the budget the
 * plan leaves unspent can only go to the jobs still running. BOA's widths are priced for the load the
 * plan expects; with no load coming, the last long jobs would run out the drain on those widths, at a
 * fraction of the budget, for hours (docs/budget-log.md, "the drain"). Here the GPUs the budget
 * allows are handed to the running jobs where they save the most time per GPU, by the profile, and a
 * job is never narrowed while the drain lasts (each change is a restart).
 */
import { type ClassProfile, epochSpeedups, speedupAt } from '../profile.ts';

export interface DrainOptions {
  /** Hours without a submission after which the queue counts as draining. */
  readonly afterHours: number;
  /** A job is widened only when the speedup grows by at least this factor... */
  readonly minSpeedupGain: number;
  /** ...and its remaining time at its current width is at least this many restarts. */
  readonly minRemainingRestarts: number;
  /** A step wider must add at least this much speedup per GPU added (GPUs that buy little stay off). */
  readonly minMarginalSpeedup: number;
}

export const DEFAULT_DRAIN: DrainOptions = {
  afterHours: 2,
  minSpeedupGain: 1.1,
  minRemainingRestarts: 20,
  minMarginalSpeedup: 0.5,
};

export interface DrainJob {
  readonly id: number;
  readonly app: string;
  readonly statEpoch: number;
  /** Statistical progress done, 0..1. */
  readonly progressFraction: number;
  /** The width it may not go below: what it holds or is planned, whichever is wider. */
  readonly width: number;
  /** Restarting jobs keep their width (a second restart would waste the first). */
  readonly restarting: boolean;
}

/**
 * Widths for the running jobs within `gpus` (whole GPUs), each at least its `width`: GPUs go, a step at
 * a time, to the job whose remaining time falls most per GPU added. Undefined when the jobs' own widths
 * do not fit (the drain then has nothing to hand out).
 */
export function drainWidths(
  jobs: readonly DrainJob[],
  classes: ReadonlyMap<string, ClassProfile>,
  gpus: number,
  options: DrainOptions = DEFAULT_DRAIN,
): Map<number, number> | undefined {
  const widths = new Map(jobs.map((job) => [job.id, job.width]));
  let free = Math.floor(gpus + 1e-9) - jobs.reduce((sum, job) => sum + job.width, 0);
  if (free < 0) return undefined;
  const growable = jobs.flatMap((job) => {
    const cls = classes.get(job.app);
    const speedups = epochSpeedups(cls, job.statEpoch);
    if (cls === undefined || speedups === undefined || job.restarting) return [];
    const work = cls.epochs.reduce((sum, e) => sum + e.workSeconds, 0) * (1 - job.progressFraction);
    const table = Object.entries(speedups)
      .map(([key, speedup]) => ({ width: Number(key), speedup }))
      .sort((a, b) => a.width - b.width);
    const start = speedupAt(speedups, job.width);
    if (work / start < options.minRemainingRestarts * cls.rescaleSeconds) return [];
    return [{ job, work, table, speedups, start }];
  });
  let candidates = growable;
  for (;;) {
    free = handOut(candidates, widths, free, options);
    // A restart has to buy enough: a job that would gain too little keeps its width, and the GPUs it
    // gives back go round the others again (they could still speed one up).
    const tooLittle = candidates.filter(
      ({ job, speedups, start }) =>
        (widths.get(job.id) as number) !== job.width &&
        speedupAt(speedups, widths.get(job.id) as number) < start * options.minSpeedupGain,
    );
    if (tooLittle.length === 0) return widths;
    for (const { job } of tooLittle) {
      free += (widths.get(job.id) as number) - job.width;
      widths.set(job.id, job.width);
    }
    candidates = candidates.filter((c) => !tooLittle.includes(c));
  }
}

interface Growable {
  readonly job: DrainJob;
  readonly work: number;
  readonly table: ReadonlyArray<{ width: number; speedup: number }>;
  readonly speedups: Readonly<Record<string, number>>;
  readonly start: number;
}

/** GPUs go, a step at a time, to the job whose remaining time falls most per GPU; returns those left. */
function handOut(
  candidates: readonly Growable[],
  widths: Map<number, number>,
  free: number,
  options: DrainOptions,
): number {
  for (;;) {
    let best: { id: number; width: number; perGpu: number } | undefined;
    for (const { job, work, table, speedups } of candidates) {
      const width = widths.get(job.id) as number;
      const speedup = speedupAt(speedups, width);
      for (const step of table) {
        const added = step.width - width;
        if (added <= 0 || added > free) continue;
        if ((step.speedup - speedup) / added < options.minMarginalSpeedup) continue;
        const perGpu = (work / speedup - work / step.speedup) / added;
        if (perGpu > 0 && (best === undefined || perGpu > best.perGpu)) {
          best = { id: job.id, width: step.width, perGpu };
        }
      }
    }
    if (best === undefined) return free;
    free -= best.width - (widths.get(best.id) as number);
    widths.set(best.id, best.width);
  }
}
