/**
 * Monotone concave hull of a speedup table: the least concave, non-decreasing function above the
 * listed points (k >= 1). Points under it are dominated when widths can alternate freely.
 */
export interface HullPoint {
  readonly width: number;
  readonly speedup: number;
}

const RELATIVE_TOLERANCE = 1e-12;

/** Cross product sign of (b - a) x (c - a): > 0 means c is above the line a-b extended. */
function turn(a: HullPoint, b: HullPoint, c: HullPoint): number {
  return (b.width - a.width) * (c.speedup - a.speedup) - (b.speedup - a.speedup) * (c.width - a.width);
}

/**
 * Points of the monotone concave hull, ascending in width. Vertices always; with `keepCollinear`, also
 * listed points lying on a hull edge (the paper's "hull integers" that rounding may land on).
 * The hull stops at the first width reaching the maximum speedup: wider is never useful.
 */
export function concaveHull(
  widths: readonly number[],
  speedups: readonly number[],
  keepCollinear = false,
): HullPoint[] {
  if (widths.length !== speedups.length || widths.length === 0) {
    throw new Error('concaveHull needs one speedup per width and at least one point');
  }
  const points = widths
    .map((width, i) => ({ width, speedup: speedups[i] as number }))
    .sort((a, b) => a.width - b.width);
  let best = 0;
  points.forEach((p, i) => {
    if (p.speedup > (points[best] as HullPoint).speedup) best = i;
  });
  const rising = points.slice(0, best + 1);
  const hull: HullPoint[] = [];
  for (const p of rising) {
    while (hull.length >= 2) {
      const a = hull[hull.length - 2] as HullPoint;
      const b = hull[hull.length - 1] as HullPoint;
      const t = turn(a, b, p);
      const scale = Math.abs((b.width - a.width) * p.speedup) + Math.abs((p.width - a.width) * b.speedup);
      const collinear = Math.abs(t) <= RELATIVE_TOLERANCE * scale;
      // Collinear is judged by the tolerance alone: a turn a rounding error above 0 is still on the edge.
      if (collinear ? !keepCollinear : t > 0) hull.pop();
      else break;
    }
    hull.push(p);
  }
  return hull;
}

/** Hull speedup at a real width (linear between hull points), for widths within the hull's range. */
export function hullSpeedupAt(hull: readonly HullPoint[], width: number): number {
  const first = hull[0] as HullPoint;
  if (width <= first.width) return first.speedup;
  for (let i = 1; i < hull.length; i++) {
    const b = hull[i] as HullPoint;
    if (width <= b.width) {
      const a = hull[i - 1] as HullPoint;
      return a.speedup + ((b.speedup - a.speedup) * (width - a.width)) / (b.width - a.width);
    }
  }
  return (hull[hull.length - 1] as HullPoint).speedup;
}
