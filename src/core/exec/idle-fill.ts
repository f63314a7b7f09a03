/**
 * GPUs the bill pays for anyway. A node is paid whole, and a node that hosts a job stays (only empty
 * nodes are released), so its idle GPUs cost nothing more when a job on it uses them. After the plan's
 * widths are placed, this widens jobs onto idle GPUs of the nodes they already occupy, where the
 * profile says they speed up enough to repay the restart. The plan and the budget control never see
 * these GPUs: the node count and the booked allocation stay the plan's.
 */
import { type ClassProfile, epochSpeedups, speedupAt } from '../profile.ts';

export interface FillCandidate {
  readonly id: number;
  readonly app: string;
  readonly statEpoch: number;
  /** Statistical progress done, 0..1. */
  readonly progressFraction: number;
  /** Restarting jobs are left alone (a second restart would waste the first). */
  readonly restarting: boolean;
}

export interface FillOptions {
  /** Widen only when the speedup grows by at least this factor... */
  readonly minSpeedupGain: number;
  /** ...and the job's remaining time at its current width is at least this many restarts. */
  readonly minRemainingRestarts: number;
  /**
   * The widening must save at least this many restarts of the
   * job's remaining time, instead of the speedup gain above; jobs on several nodes take idle GPUs of
   * their own nodes too (QUIET_FILL; `boa@fillK`). Undefined: the gain rule, one-node jobs only.
   */
  readonly minSavedRestarts?: number;
}

export const DEFAULT_FILL: FillOptions = { minSpeedupGain: 1.1, minRemainingRestarts: 20 };

/**
 * boa's fill once no job has arrived for the drain's hours (the service and the simulator): by time
 * saved, jobs on several nodes too. Then the last long jobs run for hours on part of their nodes' GPUs,
 * and the 1.1x rule left those idle; while jobs arrive it would hold GPUs the next arrival needs.
 */
export const QUIET_FILL_SAVED_RESTARTS = 20;
export const QUIET_FILL: FillOptions = { ...DEFAULT_FILL, minSavedRestarts: QUIET_FILL_SAVED_RESTARTS };

/**
 * Returns the allocations with jobs widened onto idle GPUs of their own nodes (a job on several nodes
 * is left as it is, unless `minSavedRestarts` is set). Longest remaining work first. `allocations` is not modified.
 */
export function fillIdleGpus(
  allocations: ReadonlyMap<number, readonly number[]>,
  readyNodes: ReadonlyMap<number, number>,
  candidates: readonly FillCandidate[],
  classes: ReadonlyMap<string, ClassProfile>,
  options: FillOptions = DEFAULT_FILL,
): Map<number, number[]> {
  const out = new Map([...allocations].map(([id, a]) => [id, [...a]]));
  const free = new Map(readyNodes);
  for (const allocation of out.values()) {
    for (const node of allocation) free.set(node, (free.get(node) ?? 0) - 1);
  }
  const ranked = candidates
    .map((job) => ({
      job,
      remaining: remainingSeconds(job, out.get(job.id), classes, options.minSavedRestarts !== undefined),
    }))
    .filter((c) => c.remaining !== undefined)
    .sort((a, b) => (b.remaining as number) - (a.remaining as number));
  for (const { job, remaining } of ranked) {
    const allocation = out.get(job.id) as number[];
    const node = allocation[0] as number;
    const own = [...new Set(allocation)];
    const idle = own.reduce((sum, n) => sum + Math.max(0, free.get(n) ?? 0), 0);
    const cls = classes.get(job.app) as ClassProfile;
    if (idle <= 0 || job.restarting || remaining! < options.minRemainingRestarts * cls.rescaleSeconds) {
      continue;
    }
    const speedups = epochSpeedups(cls, job.statEpoch);
    if (speedups === undefined) continue;
    const now = speedupAt(speedups, allocation.length);
    const saved = options.minSavedRestarts;
    // Time saved = remaining x (1 - now / speedup) >= saved restarts: speedup >= now / (1 - that share).
    const share = saved === undefined ? 0 : (saved * cls.rescaleSeconds) / (remaining as number);
    const enough =
      saved === undefined ? now * options.minSpeedupGain : share >= 1 ? Infinity : now / (1 - share);
    let best = allocation.length;
    let bestSpeedup = 0;
    for (const [key, speedup] of Object.entries(speedups)) {
      const width = Number(key);
      // Never a width no faster than the job runs now: with no rescale cost (rescaleSeconds 0) the
      // time-saved rule asks for no gain, and a job was restarted wider for nothing.
      if (width <= allocation.length || width > allocation.length + idle || speedup < enough) continue;
      if (speedup <= now) continue;
      // The fastest width; at equal speedup the narrower, so a GPU that adds nothing stays idle for
      // the next job on the node.
      if (speedup > bestSpeedup || (speedup === bestSpeedup && width < best)) {
        best = width;
        bestSpeedup = speedup;
      }
    }
    if (best === allocation.length) continue;
    if (own.length === 1) {
      free.set(node, idle - (best - allocation.length));
      out.set(
        job.id,
        Array.from({ length: best }, () => node),
      );
      continue;
    }
    // Several nodes: the extra GPUs from its own nodes, those with the fewest idle GPUs first.
    let extra = best - allocation.length;
    const widened = [...allocation];
    for (const n of own.sort((a, b) => (free.get(a) ?? 0) - (free.get(b) ?? 0) || a - b)) {
      const take = Math.min(extra, Math.max(0, free.get(n) ?? 0));
      for (let i = 0; i < take; i++) widened.push(n);
      free.set(n, (free.get(n) ?? 0) - take);
      extra -= take;
      if (extra === 0) break;
    }
    out.set(
      job.id,
      widened.sort((a, b) => a - b),
    );
  }
  return out;
}

/** Seconds left at the current width by the profile; undefined unless the job runs on one node. */
function remainingSeconds(
  job: FillCandidate,
  allocation: readonly number[] | undefined,
  classes: ReadonlyMap<string, ClassProfile>,
  severalNodes = false,
): number | undefined {
  if (allocation === undefined || allocation.length === 0) return undefined;
  if (!severalNodes && allocation.some((node) => node !== allocation[0])) return undefined;
  const cls = classes.get(job.app);
  if (cls === undefined) return undefined;
  const work = cls.epochs.reduce((sum, e) => sum + e.workSeconds, 0) * (1 - job.progressFraction);
  const speedups = epochSpeedups(cls, job.statEpoch);
  return speedups === undefined ? undefined : work / speedupAt(speedups, allocation.length);
}
