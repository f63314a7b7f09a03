import { type EpochProfile, SUPERLINEAR_LIMIT, type SpeedupTable } from '../core/profile.ts';
import { INFLUENCE_FACTOR, judgeWorkSample } from './trust.ts';
import { sampleWidth, sampleWork, type WorkSample } from './work-samples.ts';

/**
 * A class's speedups learned from the widths its jobs ran at. Each sample is an epoch's duration x the
 * table's speedup at its width, so if the table is right every width implies the same 1-GPU work; where
 * a width implies more, the table claims more speedup there than the jobs got. With at least
 * MIN_SAMPLES_AT_WIDTH trusted samples at each of two or more listed widths, each observed width's
 * speedup is scaled by W_ref / W_w (W: the median of its samples; ref: the narrowest observed width,
 * whose speedup the table is likeliest to have right and which keeps speedup(1) = 1 below it), clamped
 * to [1/MAX_CORRECTION, MAX_CORRECTION] as trust.ts bounds one sample. A width not observed takes a
 * factor interpolated (log-log) between the observed widths around it: below the narrowest 1,
 * above the widest the widest's, so the table's ratio to that neighbour is kept.
 */
export const MIN_SAMPLES_AT_WIDTH = 3;
export const MAX_CORRECTION = 2;

export interface LearnedEpoch {
  /** The table the plan reads: the profile's, corrected where two or more widths were observed. */
  readonly speedup: SpeedupTable;
  /** The trusted samples read against `speedup` (its duration x the speedup in use), for the work blend. */
  readonly workSamples: number[];
  /** Trusted samples by width; "unknown" for those stored without one. */
  readonly samples: Record<string, number>;
  readonly corrected: boolean;
  /** Why a correction was not used (a speedup beyond the profile rules): the profile's table is read. */
  readonly refused?: string;
}

export function learnEpoch(epoch: EpochProfile, stored: readonly WorkSample[]): LearnedEpoch {
  const profileWork = epoch.workSeconds;
  // Medians of the samples as measured (the impossible ones dropped): clamped first to the profile's
  // work bounds, a class whose work is 1.5x its profile's learned 5.6x where its jobs got 4x (found in
  // review). The work blend reads them clamped, as trust.ts bounds one sample.
  const [low, high] = [profileWork / INFLUENCE_FACTOR, profileWork * INFLUENCE_FACTOR];
  const clamp = (work: number) => Math.min(high, Math.max(low, work));
  const trusted = stored.flatMap((sample) => {
    const raw = sampleWork(sample);
    const width = sampleWidth(sample);
    const listed = width !== undefined && epoch.speedup[String(width)] !== undefined;
    return judgeWorkSample(profileWork, raw).use ? [{ raw, width: listed ? width : undefined }] : [];
  });
  const byWidth = new Map<number, number[]>();
  const samples: Record<string, number> = {};
  for (const { raw, width } of trusted) {
    const key = width === undefined ? 'unknown' : String(width);
    samples[key] = (samples[key] ?? 0) + 1;
    if (width !== undefined) byWidth.set(width, [...(byWidth.get(width) ?? []), raw]);
  }
  const asProfiled = (refused?: string): LearnedEpoch => ({
    speedup: epoch.speedup,
    workSamples: trusted.map((s) => clamp(s.raw)),
    samples,
    corrected: false,
    ...(refused ? { refused } : {}),
  });
  const factors = correctionFactors(byWidth);
  if (!factors) return asProfiled();
  const factorAt = (width: number) => factorBetween(factors, width);
  const speedup = Object.fromEntries(
    Object.entries(epoch.speedup).map(([width, s]) => [width, s * factorAt(Number(width))]),
  );
  // The profile rules' bound, checked per epoch: one epoch beyond it refused every epoch's learning.
  const beyond = Object.entries(speedup).find(([width, s]) => s > SUPERLINEAR_LIMIT * Number(width));
  if (beyond) {
    return asProfiled(
      `speedup at ${beyond[0]} GPUs would be ${beyond[1].toFixed(2)}, more than ${SUPERLINEAR_LIMIT}x linear`,
    );
  }
  const workSamples = trusted.map(({ raw, width }) =>
    clamp(width === undefined ? raw : raw * factorAt(width)),
  );
  return { speedup, workSamples, samples, corrected: true };
}

/** W_ref / W_w for each observed width, ascending; undefined with fewer than two observed widths. */
function correctionFactors(byWidth: ReadonlyMap<number, number[]>): Array<[number, number]> | undefined {
  const observed = [...byWidth]
    .filter(([, works]) => works.length >= MIN_SAMPLES_AT_WIDTH)
    .sort(([a], [b]) => a - b)
    .map(([width, works]) => [width, median(works)] as const);
  if (observed.length < 2) return undefined;
  const reference = observed[0]![1];
  return observed.map(([width, work]) => [
    width,
    Math.min(MAX_CORRECTION, Math.max(1 / MAX_CORRECTION, reference / work)),
  ]);
}

/**
 * The factor at `width`: an observed width's own; between two observed widths, log(factor) interpolated
 * in log(width), a power law, so a table that scales as a power between them keeps doing so corrected
 * (a plateau stays flat; the factor itself interpolated made a bump: 6 GPUs at 4.25x between 4 and 8
 * both at 4x, found in review; the nearest width's factor made a step, 6 GPUs slower than 4); 1 below
 * the narrowest; the widest's above it.
 */
function factorBetween(factors: ReadonlyArray<[number, number]>, width: number): number {
  if (width <= factors[0]![0]) return 1;
  const last = factors[factors.length - 1]!;
  if (width >= last[0]) return last[1];
  const upper = factors.findIndex(([w]) => w >= width);
  const [w1, f1] = factors[upper - 1]!;
  const [w2, f2] = factors[upper]!;
  const t = Math.log(width / w1) / Math.log(w2 / w1);
  return f1 * (f2 / f1) ** t;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
