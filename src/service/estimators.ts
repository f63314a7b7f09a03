import { binHoursOf, binOf, gridEdges } from './grid-bins.ts';
import { recentRise, type RiseOptions } from './rate-rise.ts';
import { robustRate } from './robust-rate.ts';
import { SubmissionIndex } from './submission-index.ts';

const HOUR = 3_600_000;

/**
 * Arrival rates per class: submissions in a sliding window, blended with a configured prior worth a
 * few hours of observation, so a new service plans with the prior and drifts to what it sees.
 *
 * Robust to bursts: the window is cut into bins (`binHours`, default 1 h) and a bin counts at most
 * `burstCap(rate x bin length)` arrivals, the rate being the estimate itself (a fixed point, found by
 * monotone iteration from the prior). 1000 submissions in one minute are 1000 jobs to queue, not a
 * rate of 1000 per window-hour: they add a few arrivals' worth of evidence. A sustained change raises
 * every bin and passes (each iteration lifts the cap), so the estimate follows it within a few bins.
 *
 * `confidence` (z, default 0) raises every estimate by the factor 1 + z / sqrt(n), n being the arrivals
 * the estimates stand for (their sum times the hours of evidence, the prior's included): the upper bound
 * of a Poisson count's usual confidence interval, so a load seen over few hours is planned as possibly
 * heavier than it looked, narrowing its widths, and the bound closes on the estimate as arrivals
 * accumulate. One factor for the whole load rather than a bound per class: a rare, heavy class seen
 * once would be planned at several times its rate, and with imagenet that doubled the plan's minimum
 * budget on workload-1 (docs/comparison.md measures both).
 */
export function estimateRates(
  classes: ReadonlyArray<{ name: string; priorRatePerHour: number }>,
  submissions: ReadonlyArray<{ className: string; submittedAt: number }>,
  options: EstimateOptions,
): Record<string, number> {
  const estimates = estimatesAt(classes, submissions, options);
  return estimates.risen ?? estimates.window;
}

export interface EstimateOptions {
  readonly now: number;
  readonly windowHours: number;
  readonly priorWeightHours: number;
  readonly observedSince: number;
  readonly binHours?: number;
  readonly confidence?: number;
  /** Rise detection (rate-rise.ts); absent: none. */
  readonly rise?: RiseOptions;
}

/** The window's estimate, and the risen one when rise detection finds a rise (plannedRates holds each). */
export function estimatesAt(
  classes: ReadonlyArray<{ name: string; priorRatePerHour: number }>,
  submissions: ReadonlyArray<{ className: string; submittedAt: number }>,
  options: EstimateOptions,
  /** The same submissions indexed (submission-index.ts): the same counts, found by binary search. */
  index?: SubmissionIndex,
): PastEstimate {
  const windowStart = Math.max(options.now - options.windowHours * HOUR, options.observedSince);
  const observedMs = Math.max(0, options.now - windowStart);
  const edges = gridEdges(windowStart, options.now, (options.binHours ?? 1) * HOUR);
  const counts = new Map<string, number[]>();
  if (index) {
    for (const c of classes) counts.set(c.name, index.bins(c.name, edges));
  } else {
    for (const s of submissions) {
      const bin = binOf(edges, s.submittedAt);
      if (bin < 0) continue;
      let bins = counts.get(s.className);
      if (!bins) counts.set(s.className, (bins = new Array<number>(edges.length - 1).fill(0)));
      bins[bin] = (bins[bin] ?? 0) + 1;
    }
  }
  const binHours = binHoursOf(edges);
  const evidenceHours = evidenceHoursOf(options.priorWeightHours, observedMs / HOUR, options.binHours);
  const rates: Record<string, number> = {};
  for (const c of classes) {
    rates[c.name] = robustRate(
      c.priorRatePerHour,
      options.priorWeightHours,
      counts.get(c.name) ?? [],
      binHours,
      evidenceHours,
    );
  }
  // Only against a full window: before it the estimate is still learning the load, not stale.
  const full = options.now - options.observedSince >= options.windowHours * HOUR;
  const recent =
    options.rise && options.rise.hours > 0 && full
      ? recentRise(classes, submissions, options.now, options.observedSince, rates, options.rise, index)
      : undefined;
  const bounded = (estimate: Record<string, number>) => {
    const factor = confidenceFactor(estimate, evidenceHours, options.confidence ?? 0);
    if (factor > 1)
      for (const name of Object.keys(estimate)) estimate[name] = (estimate[name] as number) * factor;
    return estimate;
  };
  return {
    window: bounded({ ...rates }),
    ...(recent ? { risen: bounded({ ...rates, ...recent }) } : {}),
  };
}

/**
 * The hours of evidence an estimate stands for: the prior's and those observed, and at least one bin
 * (with `priorWeightHours` 0, minutes after the start, counts over minutes would read as huge rates
 * that the plan then holds for the window).
 */
export function evidenceHoursOf(priorWeightHours: number, observedHours: number, binHours = 1): number {
  return Math.max(binHours, priorWeightHours + observedHours);
}

/** The most standard errors the bound may take: beyond it a plan is made for a load several times that seen. */
export const MAX_RATE_CONFIDENCE = 4;

/**
 * What estimates are multiplied by at a confidence of `z` standard errors: 1 + z / sqrt(n), n the
 * arrivals they stand for over `evidenceHours` (estimateRates); 1 with no arrivals or z = 0.
 */
export function confidenceFactor(
  rates: Readonly<Record<string, number>>,
  evidenceHours: number,
  z: number,
): number {
  const arrivals = Object.values(rates).reduce((sum, rate) => sum + rate, 0) * evidenceHours;
  return z > 0 && arrivals > 0 ? 1 + z / Math.sqrt(arrivals) : 1;
}

export interface PlannedRateOptions {
  readonly now: number;
  readonly windowHours: number;
  readonly priorWeightHours: number;
  readonly observedSince: number;
  /** How fast a fall in the estimate is followed: at most halving every this many hours; 0: at once. */
  readonly holdHalfLifeHours: number;
  /** The load at its upper confidence bound, z standard errors up (estimateRates); 0 or absent: none. */
  readonly confidence?: number;
  /** Rise detection (estimateRates); absent: none. */
  readonly rise?: RiseOptions;
  /** Until the window is full, every class planned with this many more arrivals in it (withFirstDayArrivals); 0 or absent: none. */
  readonly firstDayArrivals?: number;
}

/** The most first-day arrivals a class may be given: beyond it a first day plans mostly for jobs never seen. */
export const MAX_FIRST_DAY_ARRIVALS = 10;

/**
 * The rates to plan for: per class, the highest of the estimate now and the estimates just after each
 * submission of the last window, one `k` hours old counting `0.5 ** (k / holdHalfLifeHours)`. An
 * estimate peaks just after an arrival and falls between arrivals, so this is the highest estimate of
 * the window, aged. A rise is planned for at once, a fall at most halving every `holdHalfLifeHours`:
 * BOA's widths come from one price per GPU-hour for the whole budget, and re-solving for a lull's lower
 * rates widens every job in the lull and in the drain, where the budget so spent buys little
 * (docs/comparison.md). `submissions` must reach back two windows (each past estimate reads one);
 * `memo` keeps past estimates between calls (one depends only on what was submitted up to it) and
 * must be dropped when the classes or their priors change.
 */
export function plannedRates(
  classes: ReadonlyArray<{ name: string; priorRatePerHour: number }>,
  submissions: ReadonlyArray<{ className: string; submittedAt: number }>,
  options: PlannedRateOptions,
  memo: Map<number, PastEstimate> = new Map(),
): Record<string, number> {
  const { now, windowHours, priorWeightHours, observedSince, holdHalfLifeHours, confidence, rise } = options;
  const windowStart = now - windowHours * HOUR;
  for (const at of memo.keys()) if (at <= windowStart) memo.delete(at);
  // Each instant once: a burst shares one.
  const times = new Set<number>();
  let latest = Number.NEGATIVE_INFINITY;
  if (holdHalfLifeHours > 0) {
    for (const { submittedAt: at } of submissions) {
      if (at <= windowStart || at > now) continue;
      times.add(at);
      if (at > latest) latest = at;
    }
  }
  // The index serves the estimates at many instants, each then a few binary searches; for the few a
  // read usually needs (now, the latest instant: the rest are kept in `memo`), a pass each is cheaper
  // than sorting every submission (bench:rates).
  let unknown = 1;
  for (const at of times) if (!memo.has(at)) unknown += 1;
  const index = unknown > FEW_ESTIMATES ? new SubmissionIndex(submissions) : undefined;
  const estimateAt = (at: number) =>
    estimatesAt(
      classes,
      submissions,
      { now: at, windowHours, priorWeightHours, observedSince, confidence, ...(rise ? { rise } : {}) },
      index,
    );
  const current = estimateAt(now);
  const planned = { ...(current.risen ?? current.window) };
  if (!(holdHalfLifeHours > 0)) return withFirstDayArrivals(planned, classes, options);
  // Until as many hours are seen as the prior is worth, an estimate is mostly a configured prior, not
  // evidence of load: holding it would keep a wrong prior for days.
  const priorUntil = observedSince + priorWeightHours * HOUR;
  const withPrior = new Set(classes.filter((c) => c.priorRatePerHour > 0).map((c) => c.name));
  for (const at of times) {
    let past = memo.get(at);
    if (!past) {
      past = estimateAt(at);
      // More submissions may still come at the latest instant: its estimate is not kept.
      if (at < latest) memo.set(at, past);
    }
    const hours = (now - at) / HOUR;
    const weight = 0.5 ** (hours / holdHalfLifeHours);
    // A risen level is a few hours' evidence: held only as long as that.
    const riseWeight = rise ? 0.5 ** (hours / rise.holdHalfLifeHours) : 0;
    for (const [name, rate, risenRate] of entriesOf(past)) {
      if (at < priorUntil && withPrior.has(name)) continue;
      const risen = risenRate * riseWeight;
      planned[name] = Math.max(planned[name] ?? 0, rate * weight, risen);
    }
  }
  return withFirstDayArrivals(planned, classes, options);
}

/**
 * The opt-in first-day arrivals: until the service has watched a full window, every class is planned as
 * if `firstDayArrivals` more of its jobs had come in the hours observed (the prior's included, at least
 * one), a flat prior on each class's rate. On a first day the estimator cannot know which classes are
 * rare, and a class not seen yet reads 0: the rare ones are the heavy ones (one imagenet job is about
 * 148 GPU-hours), so a plan for the classes seen so far gives each job present about twice its share and
 * then narrows or queues them when the rest arrives (docs/comparison.md). The added rate falls as hours
 * pass and ends when the window is full; it is not held, and a class that never comes is planned for
 * all first day, which is what it costs. A class with a configured prior rate keeps that instead.
 */
function withFirstDayArrivals(
  planned: Record<string, number>,
  classes: ReadonlyArray<{ name: string; priorRatePerHour: number }>,
  options: PlannedRateOptions,
): Record<string, number> {
  const added = firstDayRate(options);
  if (!(added > 0)) return planned;
  // A configured prior is what the operator expects of the class, a rare one included: it stands.
  for (const c of classes) if (!(c.priorRatePerHour > 0)) planned[c.name] = (planned[c.name] ?? 0) + added;
  return planned;
}

/** Jobs per hour the first-day arrivals add to every class now; 0 when off or once the window is full. */
export function firstDayRate(
  options: Pick<
    PlannedRateOptions,
    'now' | 'observedSince' | 'windowHours' | 'priorWeightHours' | 'firstDayArrivals'
  >,
): number {
  const arrivals = options.firstDayArrivals ?? 0;
  const observedHours = Math.max(0, options.now - options.observedSince) / HOUR;
  if (!(arrivals > 0) || observedHours >= options.windowHours) return 0;
  return arrivals / Math.max(1, options.priorWeightHours + observedHours);
}

/** Estimates to find at most, a pass over the submissions each, before they are indexed instead. */
const FEW_ESTIMATES = 3;

/** A past estimate's classes with their window and risen rates, listed once per estimate kept. */
const entriesByEstimate = new WeakMap<PastEstimate, ReadonlyArray<readonly [string, number, number]>>();
function entriesOf(past: PastEstimate): ReadonlyArray<readonly [string, number, number]> {
  let entries = entriesByEstimate.get(past);
  if (!entries) {
    entries = Object.entries(past.window).map(
      ([name, rate]) => [name, rate, past.risen?.[name] ?? 0] as const,
    );
    entriesByEstimate.set(past, entries);
  }
  return entries;
}

/** An estimate plannedRates holds: the window's, and the risen one where rise detection found a rise. */
export interface PastEstimate {
  readonly window: Record<string, number>;
  readonly risen?: Record<string, number>;
}

/**
 * Work of one statistical epoch from an observed duration: seconds at a width, less the rescale, times
 * the profile's speedup at that width, is the epoch's work on 1 GPU.
 */
export function workFromDuration(seconds: number, rescaleSeconds: number, speedup: number): number {
  return Math.max(0, seconds - rescaleSeconds) * speedup;
}

/** Blends the profile's work with observed samples; the profile counts as `priorSamples` observations. */
export function blendWork(profileWork: number, samples: readonly number[], priorSamples = 3): number {
  const sum = samples.reduce((a, b) => a + b, 0);
  return (profileWork * priorSamples + sum) / (priorSamples + samples.length);
}

/**
 * Re-plan when some class's load moved by more than `fraction` of what the plan was made for. A class
 * missing from either side is at 0 there: the simulator's online rates leave out a class that fell
 * to 0, which the service's loadRates lists at 0, and the fall is the same move.
 */
export function ratesMoved(
  planned: Readonly<Record<string, number>>,
  now: Readonly<Record<string, number>>,
  fraction = 0.25,
): boolean {
  return [...new Set([...Object.keys(planned), ...Object.keys(now)])].some((name) => {
    const before = planned[name] ?? 0;
    return Math.abs((now[name] ?? 0) - before) > fraction * Math.max(before, 1e-3);
  });
}
