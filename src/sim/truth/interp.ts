/** Linear interpolation helpers shared by the throughput and gradient-statistics tables. */

/** Index i and weight w such that x ~ xs[i] * (1 - w) + xs[i + 1] * w, clamped to the ends. */
export function bracket(xs: readonly number[], x: number): { i: number; w: number } {
  const n = xs.length;
  if (n === 0) throw new RangeError('cannot interpolate an empty table');
  const first = xs[0] as number;
  const last = xs[n - 1] as number;
  if (n === 1 || x <= first) return { i: 0, w: 0 };
  if (x >= last) return { i: n - 2, w: 1 };
  let lo = 0;
  let hi = n - 1;
  // Invariant: xs[lo] <= x < xs[hi].
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) <= x) lo = mid;
    else hi = mid;
  }
  const x0 = xs[lo] as number;
  const x1 = xs[hi] as number;
  return { i: lo, w: (x - x0) / (x1 - x0) };
}

/** Piecewise-linear interpolation of ys over ascending xs; constant beyond the ends. */
export function interp1(xs: readonly number[], ys: readonly number[], x: number): number {
  const { i, w } = bracket(xs, x);
  const y0 = ys[i] as number;
  if (w === 0) return y0;
  return y0 + ((ys[i + 1] as number) - y0) * w;
}
