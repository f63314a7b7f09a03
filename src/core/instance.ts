import { listedWidths, type ProfileFile } from './profile.ts';

/** One statistical epoch as the calculators see it: listed widths and their speedups, ascending. */
export interface PlanningEpoch {
  /** Mean work in seconds on 1 GPU. */
  readonly workSeconds: number;
  readonly widths: readonly number[];
  readonly speedups: readonly number[];
}

export interface PlanningClass {
  readonly name: string;
  /** Arrivals per hour. */
  readonly ratePerHour: number;
  readonly weight: number;
  readonly rescaleSeconds: number;
  readonly epochs: readonly PlanningEpoch[];
}

/** A planning problem: the classes that arrive, with their rates. */
export interface Instance {
  readonly classes: readonly PlanningClass[];
}

export class InstanceError extends Error {
  override name = 'InstanceError';
}

export interface InstanceOptions {
  /**
   * Widest allocation to consider (GPUs: the node group's maximum); widths above it are ignored. An
   * epoch with no listed width within it keeps its narrowest: such a job can only run short, and a plan
   * still needs a width for it.
   */
  maxWidth?: number;
}

/** Combines a validated profile with arrival rates; only classes with a rate are planned. */
export function buildInstance(
  profile: ProfileFile,
  ratesPerHour: Readonly<Record<string, number>>,
  options: InstanceOptions = {},
): Instance {
  const maxWidth = options.maxWidth ?? Number.POSITIVE_INFINITY;
  const byName = new Map(profile.classes.map((c) => [c.name, c]));
  const classes: PlanningClass[] = [];
  for (const [name, rate] of Object.entries(ratesPerHour)) {
    const cls = byName.get(name);
    if (!cls) {
      throw new InstanceError(
        `no profile for class "${name}"; the profile has: ${[...byName.keys()].join(', ')}`,
      );
    }
    if (!(Number.isFinite(rate) && rate > 0)) {
      throw new InstanceError(
        `arrival rate of "${name}" must be a positive number of jobs/hour, got ${rate}`,
      );
    }
    classes.push({
      name,
      ratePerHour: rate,
      weight: cls.weight,
      rescaleSeconds: cls.rescaleSeconds,
      epochs: cls.epochs.map((epoch) => {
        const listed = listedWidths(epoch);
        const fitting = listed.filter((k) => k <= maxWidth);
        const widths = fitting.length > 0 ? fitting : listed.slice(0, 1);
        return { workSeconds: epoch.workSeconds, widths, speedups: widths.map((k) => epoch.speedup[k] ?? 0) };
      }),
    });
  }
  if (classes.length === 0) throw new InstanceError('no classes to plan: every arrival rate is missing');
  return { classes };
}

/** Speedup of an epoch at a listed width; throws for a width the table does not list. */
export function speedupAt(epoch: PlanningEpoch, width: number): number {
  const i = epoch.widths.indexOf(width);
  if (i < 0) throw new InstanceError(`width ${width} is not listed (listed: ${epoch.widths.join(', ')})`);
  return epoch.speedups[i] as number;
}
