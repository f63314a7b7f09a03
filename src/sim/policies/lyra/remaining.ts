/**
 * Lyra's job model: a job's estimated remaining time at a given width, from its class profile only
 * (Lyra profiles each job's throughput per worker count; planners never see the truth). Statistical
 * epochs hold equal shares of progress (how the profiles are cut), so the current epoch has
 * ((e + 1) / n - progress) x n of its 1-GPU work left; later epochs are whole.
 */
import type { ClassProfile } from '../../../core/profile.ts';
import type { JobView } from '../../policy.ts';

export class LyraModelError extends Error {
  override name = 'LyraModelError';
}

interface ClassTable {
  readonly epochs: number;
  /** Widths listed in every epoch's speedup table, ascending: the only widths worth choosing. */
  readonly widths: readonly number[];
  /** seconds[e][k]: the whole epoch e at k GPUs (the widest listed speedup <= k), k = 1..widest. */
  readonly seconds: readonly Float64Array[];
  /** after[e][k]: epochs after e, all at k GPUs. */
  readonly after: readonly Float64Array[];
}

export class RemainingTime {
  readonly #classes = new Map<string, ClassTable>();

  constructor(classes: readonly ClassProfile[]) {
    for (const cls of classes) this.#classes.set(cls.name, classTable(cls));
  }

  /** Listed widths of the job's class, ascending. */
  widths(app: string): readonly number[] {
    return this.#table(app).widths;
  }

  /** Estimated seconds of work left for `job` at `gpus` GPUs (restarts not included). */
  seconds(job: JobView, gpus: number): number {
    if (!(Number.isInteger(gpus) && gpus >= 1)) {
      throw new LyraModelError(`a width must be a positive integer number of GPUs, got ${gpus}`);
    }
    const table = this.#table(job.app);
    const n = table.epochs;
    const e = Math.min(Math.max(0, job.statEpoch), n - 1);
    const widest = (table.seconds[0] as Float64Array).length - 1;
    const k = Math.min(gpus, widest);
    // Share of the current epoch still to do; the engine's epoch ends are only about equal, so clamp.
    const left = Math.min(1, Math.max(0, e + 1 - job.progressFraction * n));
    const epoch = (table.seconds[e] as Float64Array)[k] as number;
    return left * epoch + ((table.after[e] as Float64Array)[k] as number);
  }

  #table(app: string): ClassTable {
    const table = this.#classes.get(app);
    if (table === undefined) {
      const known = [...this.#classes.keys()].join(', ');
      throw new LyraModelError(`no profile for application "${app}"; the profiles have: ${known}`);
    }
    return table;
  }
}

function classTable(cls: ClassProfile): ClassTable {
  const listed = cls.epochs.map((epoch) => new Set(Object.keys(epoch.speedup).map(Number)));
  const widths = [...(listed[0] as Set<number>)].filter((w) => listed.every((set) => set.has(w)));
  widths.sort((a, b) => a - b);
  const widest = Math.max(...listed.map((set) => Math.max(...set)));
  const seconds = cls.epochs.map((epoch) => {
    const row = new Float64Array(widest + 1);
    let speedup = 1;
    for (let k = 1; k <= widest; k++) {
      speedup = epoch.speedup[String(k)] ?? speedup;
      row[k] = epoch.workSeconds / speedup;
    }
    return row;
  });
  const after = seconds.map(() => new Float64Array(widest + 1));
  for (let e = seconds.length - 2; e >= 0; e--) {
    const row = after[e] as Float64Array;
    const next = after[e + 1] as Float64Array;
    const nextSeconds = seconds[e + 1] as Float64Array;
    for (let k = 1; k <= widest; k++) row[k] = (next[k] as number) + (nextSeconds[k] as number);
  }
  return { epochs: cls.epochs.length, widths, seconds, after };
}
