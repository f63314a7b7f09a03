/**
 * A job's estimated remaining run time at a width, from its class profile only (what a planner may see;
 * lyra, ones, cornucopia and cuckoo plan on it, never on the truth). Statistical epochs hold equal
 * shares of progress (that is how the profiles are cut), so the current epoch e of n has
 * (e + 1 - progress x n) of its 1-GPU work left, and later epochs are whole. Two speedup readings:
 * `listed` (the widest listed width <= k, as measured: it may dip across node boundaries; lyra, ones,
 * cornucopia and cuckoo) and `hull` (the monotone concave hull, so time is convex in width; an earlier
 * elastic cuckoo needed that, no policy uses it now).
 */
import { concaveHull, hullSpeedupAt } from '../../../core/hull.ts';
import { type ClassProfile, type EpochProfile, listedWidths } from '../../../core/profile.ts';
import type { JobView } from '../../policy.ts';

export class RemainingModelError extends Error {
  override name = 'RemainingModelError';
}

export type SpeedupReading = 'listed' | 'hull';

interface ClassTable {
  readonly epochs: number;
  /** Widest width any epoch lists. */
  readonly widest: number;
  /** Widths listed in every epoch's speedup table, ascending. */
  readonly widths: readonly number[];
  /** seconds[e][k]: the whole of epoch e at k GPUs, k = 1..widest (index 0 unused). */
  readonly seconds: readonly Float64Array[];
  /** after[e][k]: every epoch after e at k GPUs. */
  readonly after: readonly Float64Array[];
  /** peak[e]: the narrowest width reaching epoch e's highest speedup. */
  readonly peak: readonly number[];
}

export class RemainingTime {
  readonly #classes = new Map<string, ClassTable>();

  constructor(classes: readonly ClassProfile[], reading: SpeedupReading = 'listed') {
    for (const cls of classes) this.#classes.set(cls.name, classTable(cls, reading));
  }

  /** Widest width the job's class lists. */
  widest(app: string): number {
    return this.#table(app).widest;
  }

  /** Widths every epoch of the job's class lists, ascending (lyra: the only widths worth choosing). */
  widths(app: string): readonly number[] {
    return this.#table(app).widths;
  }

  /** The narrowest width at which the job's current epoch reaches its highest speedup. */
  peakWidth(job: JobView): number {
    const table = this.#table(job.app);
    return table.peak[epochOf(job, table)] as number;
  }

  /** Estimated seconds of run time left for `job` at `gpus` GPUs (restarts not included). */
  seconds(job: JobView, gpus: number): number {
    const table = this.#table(job.app);
    if (!(Number.isInteger(gpus) && gpus >= 1)) {
      throw new RemainingModelError(`a width must be a positive integer number of GPUs, got ${gpus}`);
    }
    const k = Math.min(gpus, table.widest);
    const e = epochOf(job, table);
    const n = table.epochs;
    // Share of the current epoch still to do; the engine's epoch ends are only about equal, so clamp.
    const left = Math.min(1, Math.max(0, e + 1 - job.progressFraction * n));
    return (
      left * ((table.seconds[e] as Float64Array)[k] as number) +
      ((table.after[e] as Float64Array)[k] as number)
    );
  }

  /** The whole job's run time at `gpus` GPUs from the start. */
  wholeSeconds(app: string, gpus: number): number {
    const table = this.#table(app);
    const k = Math.min(Math.max(1, Math.floor(gpus)), table.widest);
    return (
      ((table.seconds[0] as Float64Array)[k] as number) + ((table.after[0] as Float64Array)[k] as number)
    );
  }

  #table(app: string): ClassTable {
    const table = this.#classes.get(app);
    if (table === undefined) {
      throw new RemainingModelError(
        `no profile for application "${app}"; the profiles have: ${[...this.#classes.keys()].join(', ')}`,
      );
    }
    return table;
  }
}

function epochOf(job: JobView, table: ClassTable): number {
  return Math.min(Math.max(0, job.statEpoch), table.epochs - 1);
}

function classTable(cls: ClassProfile, reading: SpeedupReading): ClassTable {
  const listed = cls.epochs.map(listedWidths);
  const widest = Math.max(...listed.map((widths) => Math.max(...widths)));
  const widths = (listed[0] as number[]).filter((w) => listed.every((ws) => ws.includes(w)));
  const seconds = cls.epochs.map((epoch) => {
    const speedup = speedupFunction(epoch, reading);
    const row = new Float64Array(widest + 1);
    for (let k = 1; k <= widest; k++) row[k] = epoch.workSeconds / speedup(k);
    return row;
  });
  const after = seconds.map(() => new Float64Array(widest + 1));
  for (let e = seconds.length - 2; e >= 0; e--) {
    const next = seconds[e + 1] as Float64Array;
    const nextAfter = after[e + 1] as Float64Array;
    const row = after[e] as Float64Array;
    for (let k = 1; k <= widest; k++) row[k] = (next[k] as number) + (nextAfter[k] as number);
  }
  const peak = cls.epochs.map((epoch) => {
    let best = 1;
    for (const k of listedWidths(epoch))
      if ((epoch.speedup[k] as number) > (epoch.speedup[best] as number)) best = k;
    return best;
  });
  return { epochs: cls.epochs.length, widest, widths, seconds, after, peak };
}

/** Speedup at any width 1..widest: the widest listed width <= k, or the concave hull's value. */
function speedupFunction(epoch: EpochProfile, reading: SpeedupReading): (k: number) => number {
  const widths = listedWidths(epoch);
  const values = widths.map((k) => epoch.speedup[k] as number);
  if (reading === 'hull') {
    const hull = concaveHull(widths, values);
    return (k) => hullSpeedupAt(hull, k);
  }
  return (k) => {
    let value = values[0] as number;
    for (let i = 0; i < widths.length && (widths[i] as number) <= k; i++) value = values[i] as number;
    return value;
  };
}
