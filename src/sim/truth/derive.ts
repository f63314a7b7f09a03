/**
 * Job-class profiles (statistical epochs with 1-GPU work and speedup tables) derived from the ground
 * truth. Pure: the profiles script does the I/O.
 *
 * Statistical epochs are unions of whole data epochs, chosen so each holds about an equal share of the
 * job's total progress (goodput only changes at data-epoch boundaries, so whole data epochs keep every
 * statistical epoch's speedup exact rather than an average over a split data epoch).
 */
import type { ClassProfile } from '../../core/profile.ts';
import type { JobTruth } from './model.ts';
import { packedPlacement } from './placement.ts';

/** Widths in every derived table: each k up to 16 (all measured), then 4-per-node points up to 64. */
export const DEFAULT_WIDTHS: readonly number[] = [
  ...Array.from({ length: 16 }, (_, i) => i + 1),
  20,
  24,
  28,
  32,
  40,
  48,
  56,
  64,
];
export const DEFAULT_STAT_EPOCHS = 8;

export interface DeriveOptions {
  /** Statistical epochs wanted; a class with fewer data epochs gets one per data epoch. */
  readonly epochs: number;
  readonly widths: readonly number[];
  readonly gpusPerNode: number;
  readonly rescaleSeconds: number;
  readonly weight: number;
  /** Significant digits kept in workSeconds and in speedups. */
  readonly workDigits: number;
  readonly speedupDigits: number;
}

export const DEFAULT_DERIVE: DeriveOptions = {
  epochs: DEFAULT_STAT_EPOCHS,
  widths: DEFAULT_WIDTHS,
  gpusPerNode: 4,
  rescaleSeconds: 30,
  weight: 1,
  workDigits: 5,
  speedupDigits: 4,
};

/**
 * Groups data epochs 0..D-1 into n consecutive non-empty runs whose progress is as close as possible to
 * equal shares: the j-th cut is the data-epoch boundary nearest to j/n of the total (ties: earlier).
 */
export function splitDataEpochs(epochEnds: readonly number[], n: number): number[][] {
  const d = epochEnds.length;
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`statistical epochs must be a positive integer, got ${n}`);
  const parts = Math.min(n, d);
  const total = epochEnds[d - 1] as number;
  const cuts = [0];
  for (let j = 1; j < parts; j++) {
    const target = (total * j) / parts;
    const prev = cuts[j - 1] as number;
    let best = prev + 1;
    // A cut after c data epochs sits at epochEnds[c - 1]; leave room for the remaining runs.
    for (let c = prev + 1; c <= d - (parts - j); c++) {
      const gap = Math.abs((epochEnds[c - 1] as number) - target);
      if (gap < Math.abs((epochEnds[best - 1] as number) - target)) best = c;
    }
    cuts.push(best);
  }
  cuts.push(d);
  return Array.from({ length: parts }, (_, j) =>
    Array.from({ length: (cuts[j + 1] as number) - (cuts[j] as number) }, (_, i) => (cuts[j] as number) + i),
  );
}

/** Progress made during data epoch e. */
export function epochProgress(truth: JobTruth, e: number): number {
  return (truth.epochEnds[e] as number) - (e === 0 ? 0 : (truth.epochEnds[e - 1] as number));
}

/** Seconds to run the given data epochs on k GPUs packed gpusPerNode per node, best batch per data epoch. */
export function secondsOnWidth(
  truth: JobTruth,
  dataEpochs: readonly number[],
  k: number,
  gpusPerNode = 4,
): number {
  const placement = packedPlacement(k, gpusPerNode);
  let seconds = 0;
  for (const e of dataEpochs) {
    const best = truth.bestConfigInEpoch(placement, e);
    if (best === undefined) return Number.POSITIVE_INFINITY;
    seconds += epochProgress(truth, e) / best.goodput;
  }
  return seconds;
}

export interface DerivedEpoch {
  readonly dataEpochs: readonly number[];
  /** Unrounded seconds per width. */
  readonly seconds: ReadonlyMap<number, number>;
}

function round(x: number, digits: number): number {
  return Number(x.toPrecision(digits));
}

/** The class profile plus the unrounded times behind it (for summaries and checks). */
export function deriveClassProfile(
  name: string,
  truth: JobTruth,
  options: DeriveOptions = DEFAULT_DERIVE,
): { profile: ClassProfile; epochs: DerivedEpoch[] } {
  const widths = [...new Set([1, ...options.widths])].sort((a, b) => a - b);
  const epochs = splitDataEpochs(truth.epochEnds, options.epochs).map((dataEpochs) => ({
    dataEpochs,
    seconds: new Map(widths.map((k) => [k, secondsOnWidth(truth, dataEpochs, k, options.gpusPerNode)])),
  }));
  const profile: ClassProfile = {
    name,
    weight: options.weight,
    rescaleSeconds: options.rescaleSeconds,
    epochs: epochs.map(({ seconds }) => {
      const one = seconds.get(1) as number;
      const speedup: Record<string, number> = {};
      for (const k of widths) {
        const t = seconds.get(k) as number;
        // A width with no valid batch (k * min per-GPU batch > max batch) is left out of the table.
        if (Number.isFinite(t)) speedup[String(k)] = k === 1 ? 1 : round(one / t, options.speedupDigits);
      }
      return { workSeconds: round(one, options.workDigits), speedup };
    }),
  };
  return { profile, epochs };
}
