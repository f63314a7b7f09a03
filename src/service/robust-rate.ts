/**
 * A rate from binned arrival counts that a burst cannot blow up (the rate estimator's core, shared by
 * the window's estimate in estimators.ts and rise detection in rate-rise.ts).
 */
/**
 * The most arrivals a bin is evidence for when `expected` are expected in it: about the 99.9% point
 * of a Poisson count (mean + 3 sd) plus 3, so quiet classes can still rise. More is a burst.
 */
export function burstCap(expected: number): number {
  return expected + 3 * Math.sqrt(expected) + 3;
}

/**
 * Jobs/hour from arrival counts in bins of `binHours`, with a prior rate worth `priorWeightHours`: each
 * bin counts at most burstCap of what the rate expects in it, the rate being the estimate itself (a
 * fixed point). The counts are read over at least `minWeightHours`: with no prior weight and a single
 * short bin, a bin's cap rises with the estimate and never binds, so one arrival a millisecond after
 * the start would read as 3.6 million an hour and a burst would count in full.
 */
export function robustRate(
  prior: number,
  priorWeightHours: number,
  binCounts: readonly number[],
  binHours: readonly number[],
  minWeightHours = 0,
): number {
  const weight = Math.max(minWeightHours, priorWeightHours + binHours.reduce((a, b) => a + b, 0));
  if (weight <= 0) return 0;
  const step = (rate: number) => {
    let evidence = prior * priorWeightHours;
    binHours.forEach((hours, b) => {
      evidence += Math.min(binCounts[b] ?? 0, burstCap(rate * hours));
    });
    return evidence / weight;
  };
  // step() is increasing in the rate: iterating from the prior converges monotonically.
  let rate = prior;
  for (let i = 0; i < 1000; i++) {
    const next = step(rate);
    if (Math.abs(next - rate) <= 1e-9 * Math.max(1, rate)) return next;
    rate = next;
  }
  return rate;
}
