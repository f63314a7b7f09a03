import type { PlanShare } from '../core/plan.ts';

/**
 * Picks the mixture share for an arriving job: the share furthest below its target fraction among the
 * jobs admitted so far. Deterministic, and the realised fractions track the targets to within one job,
 * which a random draw does not guarantee on a short trace.
 */
export function chooseShare(shares: readonly PlanShare[], admittedPerShare: readonly number[]): number {
  const total = admittedPerShare.reduce((a, b) => a + b, 0) + 1;
  let best = 0;
  let bestDeficit = Number.NEGATIVE_INFINITY;
  shares.forEach((s, i) => {
    const deficit = s.share * total - (admittedPerShare[i] ?? 0);
    if (deficit > bestDeficit + 1e-12) {
      best = i;
      bestDeficit = deficit;
    }
  });
  return best;
}
