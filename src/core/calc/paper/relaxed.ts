import { concaveHull, type HullPoint } from '../../hull.ts';

/**
 * The paper's continuous problem without rescale costs, over hull-interpolated speedups:
 *   minimise sum_e a_e / s_e(k_e)   subject to   sum_e c_e k_e / s_e(k_e) <= budget,  k_e >= 1,
 * with a_e = lambda w x (time weight) and c_e = lambda x / 3600 (GPU-hours per hour per unit k/s).
 * Convex after z = 1/s(k) and separable, so one Lagrange multiplier, found by bisection, solves it.
 */
export interface RelaxedItem {
  readonly timeWeight: number;
  readonly costWeight: number;
  /** Hull points from the most GPU-efficient vertex upward, collinear points included. */
  readonly points: readonly HullPoint[];
  /** Indices into `points` of the hull's vertices (the candidates of the continuous optimum). */
  readonly vertices: readonly number[];
  /** thresholds[t]: above this multiplier, vertex t beats vertex t+1 (descending in t). */
  readonly thresholds: readonly number[];
}

export function makeRelaxedItem(
  widths: readonly number[],
  speedups: readonly number[],
  weight: number,
  timeWeight: number,
  costWeight: number,
): RelaxedItem {
  const all = concaveHull(widths, speedups, true);
  const corners = concaveHull(widths, speedups, false);
  // Below the most efficient vertex, a wider vertex is both faster and cheaper: never optimal. Among
  // equally efficient vertices (a linear start, s(2) = 2) the widest is as cheap and faster; starting
  // at a narrower one would give their pair an infinite threshold (0 in its denominator), which stops
  // the bisection and interpolates every item under its hull.
  let start = 0;
  corners.forEach((p, i) => {
    const best = corners[start] as HullPoint;
    if (p.width / p.speedup <= best.width / best.speedup) start = i;
  });
  const kept = corners.slice(start);
  const points = all.filter((p) => p.width >= (kept[0] as HullPoint).width);
  const vertices = kept.map((v) => points.findIndex((p) => p.width === v.width));
  const thresholds: number[] = [];
  for (let t = 0; t + 1 < kept.length; t++) {
    const lo = kept[t] as HullPoint;
    const hi = kept[t + 1] as HullPoint;
    // (w + mu k_hi)/s_hi < (w + mu k_lo)/s_lo  <=>  mu < w (s_hi - s_lo) / (k_hi s_lo - k_lo s_hi)
    thresholds.push((weight * (hi.speedup - lo.speedup)) / (hi.width * lo.speedup - lo.width * hi.speedup));
  }
  return { timeWeight, costWeight, points, vertices, thresholds };
}

/** Vertex (index into `vertices`) minimising (w + mu k)/s(k) for this item. */
function vertexAt(item: RelaxedItem, mu: number): number {
  let t = 0;
  while (t < item.thresholds.length && mu < (item.thresholds[t] as number)) t++;
  return t;
}

function pointCost(p: HullPoint): number {
  return p.width / p.speedup;
}

function budgetOf(items: readonly RelaxedItem[], choice: readonly number[]): number {
  let budget = 0;
  items.forEach((item, e) => {
    budget +=
      item.costWeight * pointCost(item.points[item.vertices[choice[e] as number] as number] as HullPoint);
  });
  return budget;
}

/** The least budget the relaxed problem can reach: every item at its most efficient vertex. */
export function relaxedMinimumBudget(items: readonly RelaxedItem[]): number {
  return budgetOf(
    items,
    items.map(() => 0),
  );
}

/** Position of the relaxed optimum: a vertex per item, and at most a few items part-way to the next. */
export interface RelaxedOptimum {
  /** Real-valued width per item. */
  readonly widths: readonly number[];
}

const BISECTION_STEPS = 200;

/**
 * Solves the relaxed problem at a budget at or above its minimum: bisection on the multiplier, then the
 * items that differ between the bracket's ends are moved together along their hull segments until the
 * budget is spent exactly (the continuous optimum).
 */
export function solveRelaxed(items: readonly RelaxedItem[], budget: number): RelaxedOptimum {
  const top = items.map((item) => item.vertices.length - 1);
  const widthOf = (item: RelaxedItem, v: number) =>
    (item.points[item.vertices[v] as number] as HullPoint).width;
  if (budgetOf(items, top) <= budget)
    return { widths: items.map((item, e) => widthOf(item, top[e] as number)) };
  let lo = 0;
  // A loop, not Math.max(...): a long profile's items hold more thresholds than a call takes arguments.
  let hi = 0;
  for (const item of items) for (const threshold of item.thresholds) hi = Math.max(hi, threshold);
  for (let step = 0; step < BISECTION_STEPS && hi - lo > 1e-12 * hi; step++) {
    const mid = (lo + hi) / 2;
    const spent = budgetOf(
      items,
      items.map((item) => vertexAt(item, mid)),
    );
    if (spent > budget) lo = mid;
    else hi = mid;
  }
  const under = items.map((item) => vertexAt(item, hi));
  const over = items.map((item) => vertexAt(item, lo));
  const moving = items.map((_, e) => (over[e] as number) > (under[e] as number));
  const at = (phi: number) =>
    items.map((item, e) => {
      const a = item.points[item.vertices[under[e] as number] as number] as HullPoint;
      if (!moving[e]) return a;
      const b = item.points[item.vertices[over[e] as number] as number] as HullPoint;
      return {
        width: a.width + phi * (b.width - a.width),
        speedup: a.speedup + phi * (b.speedup - a.speedup),
      };
    });
  const spentAt = (phi: number) =>
    at(phi).reduce((sum, p, e) => sum + (items[e] as RelaxedItem).costWeight * pointCost(p), 0);
  let phiLo = 0;
  let phiHi = 1;
  for (let step = 0; step < 60; step++) {
    const mid = (phiLo + phiHi) / 2;
    if (spentAt(mid) > budget) phiHi = mid;
    else phiLo = mid;
  }
  return { widths: at(phiLo).map((p) => p.width) };
}

/** Rounds a real width to the nearest hull point of the item (ties round down, as BOA.md states). */
export function roundToHull(item: RelaxedItem, width: number): number {
  let best = (item.points[0] as HullPoint).width;
  for (const p of item.points) {
    if (Math.abs(p.width - width) < Math.abs(best - width)) best = p.width;
  }
  return best;
}
