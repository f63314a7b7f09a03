/**
 * Submissions sorted by time per class, so an estimate counts a window's bins by binary search instead
 * of a pass over every submission. plannedRates reads an estimate at each submission instant of the
 * window: with a pass each, its first read grew with the square of the instants (8,000 took 1.8 s);
 * with the index 0.26 s (`npm run -s bench:rates`).
 *
 * The counts are exactly the pass's: both put a submission at `t` in the bin (edges[i], edges[i + 1]]
 * that holds it.
 */
export class SubmissionIndex {
  readonly #times = new Map<string, Float64Array>();

  constructor(submissions: ReadonlyArray<{ className: string; submittedAt: number }>) {
    const lists = new Map<string, number[]>();
    for (const s of submissions) {
      let list = lists.get(s.className);
      if (!list) lists.set(s.className, (list = []));
      list.push(s.submittedAt);
    }
    for (const [name, list] of lists) this.#times.set(name, Float64Array.from(list).sort());
  }

  /** Submissions of the class in (from, to]. */
  count(className: string, from: number, to: number): number {
    const times = this.#times.get(className);
    if (!times) return 0;
    return (
      firstIndex(times, 0, times.length, (t) => t > to) - firstIndex(times, 0, times.length, (t) => t > from)
    );
  }

  /** The class's submissions in each bin (edges[i], edges[i + 1]] (grid-bins.ts). */
  bins(className: string, edges: readonly number[]): number[] {
    return edges.slice(1).map((edge, i) => this.count(className, edges[i] as number, edge));
  }
}

/** The first index in [lo, hi) where `past` holds, `past` being false then true along the sorted times. */
function firstIndex(times: Float64Array, lo: number, hi: number, past: (t: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(times[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
