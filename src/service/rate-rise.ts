/**
 * Rise detection for the rate estimator (estimators.ts): a step up in load, followed within hours
 * instead of as it fills the window.
 */
import { binHoursOf, binOf, gridEdges } from './grid-bins.ts';
import { robustRate } from './robust-rate.ts';
import type { SubmissionIndex } from './submission-index.ts';

const HOUR = 3_600_000;

/**
 * Rise detection: the window's estimate follows a step up in load only as the step's hours fill the
 * window (after 22 hours at 2 an hour, 2 hours at 8 read as 2.3). The last `hours` are compared with
 * what the estimate expects of them; a rise there becomes the estimate, at the recent level. Bins of
 * `binMinutes`, burst-capped as the window's are, so a burst of N submissions adds a few arrivals'
 * worth, not N.
 */
export interface RiseOptions {
  readonly hours: number;
  /** A rise is more arrivals than the window expects by `z` Poisson standard deviations... */
  readonly z: number;
  /** ...and at least `factor` times it. */
  readonly factor: number;
  readonly binMinutes: number;
  /** plannedRates holds a risen level through a fall at most halving every this many hours. */
  readonly holdHalfLifeHours: number;
}

/** The service's defaults (config.ts rateRiseHours, rateRiseZ); 5-minute bins and a hold as long as the hours. */
export const DEFAULT_RISE: RiseOptions = {
  hours: 2,
  z: 3,
  factor: 2,
  binMinutes: 5,
  holdHalfLifeHours: 2,
};

/** Rise detection over `hours` at `z` (the service's settings); undefined when `hours` is 0 (off). */
export function riseOptions(hours: number, z: number): RiseOptions | undefined {
  return hours > 0 ? { ...DEFAULT_RISE, hours, z, holdHalfLifeHours: hours } : undefined;
}

/**
 * The rates of the recent level when the last `hours` hold a rise over `rates`, the window's estimate;
 * undefined when not. The caller checks that the window is full.
 */
export function recentRise(
  classes: ReadonlyArray<{ name: string }>,
  submissions: ReadonlyArray<{ className: string; submittedAt: number }>,
  now: number,
  observedSince: number,
  rates: Readonly<Record<string, number>>,
  rise: RiseOptions,
  /** The same submissions indexed: the same counts by binary search (submission-index.ts). */
  index?: SubmissionIndex,
): Record<string, number> | undefined {
  const start = Math.max(now - rise.hours * HOUR, observedSince);
  const spanMs = now - start;
  // Less than a full recent window is too little to call a change on.
  if (spanMs < rise.hours * HOUR - 1) return undefined;
  const edges = gridEdges(start, now, rise.binMinutes * 60_000);
  const binCount = edges.length - 1;
  const total = new Array<number>(binCount).fill(0);
  const classBins = new Map<string, number[]>();
  // Each class once, though a caller may list one twice.
  const known = new Set(classes.map((c) => c.name));
  if (index) {
    for (const name of known) classBins.set(name, index.bins(name, edges));
  } else {
    // Every class in the classes' order, as the index path has them: the shares below are summed in
    // this order, and a sum in another order differs in its last bits.
    for (const name of known) classBins.set(name, new Array<number>(binCount).fill(0));
    for (const s of submissions) {
      if (!known.has(s.className)) continue;
      const bin = binOf(edges, s.submittedAt);
      if (bin < 0) continue;
      const bins = classBins.get(s.className)!;
      bins[bin] = (bins[bin] ?? 0) + 1;
    }
  }
  for (const bins of classBins.values()) bins.forEach((n, b) => (total[b] = (total[b] ?? 0) + n));
  const binHours = binHoursOf(edges);
  const level = robustRate(0, 0, total, binHours); // jobs/hour, all classes
  const hours = spanMs / HOUR;
  const expected = Object.values(rates).reduce((a, b) => a + b, 0) * hours;
  const seen = level * hours;
  // A rise is both beyond noise and a step the plan must follow: at least `factor` times the window's level.
  if (!(seen > expected + rise.z * Math.sqrt(expected) + rise.z && seen >= rise.factor * expected))
    return undefined;
  // The mix: half the recent hours' (few arrivals, but current), half the window's (more, but older);
  // no class below its window estimate, so a rare class the recent hours lack keeps its rate.
  // The recent mix from each class's burst-capped level, not its raw count: a burst of 1000 submissions
  // of one class would otherwise take nearly all of the level, however few arrivals it is evidence for.
  const perClass = new Map<string, number>();
  for (const [name, bins] of classBins) perClass.set(name, robustRate(0, 0, bins, binHours));
  const scaled: Record<string, number> = {};
  const counted = [...perClass.values()].reduce((a, b) => a + b, 0);
  for (const c of classes) {
    const recentShare = counted > 0 ? (perClass.get(c.name) ?? 0) / counted : 0;
    const windowRate = rates[c.name] ?? 0;
    const windowShare = expected > 0 ? (windowRate * hours) / expected : recentShare;
    scaled[c.name] = Math.max(windowRate, (level * (recentShare + windowShare)) / 2);
  }
  return scaled;
}
