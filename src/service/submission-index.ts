/**
 * Submissions sorted by time per class, so an estimate counts a window's bins by binary search instead
 * of a pass over every submission. plannedRates reads an estimate at each submission instant of the
 * window: with a pass each, its first read grew with the square of the instants (8,000 took 1.8 s);
 * with the index 0.26 s (`npm run -s bench:rates`).
 *
 * The counts are exactly the pass's: a submission at `t` falls in bin `binOf(t)`, the same expression
 * the pass evaluates, and since that expression never decreases as `t` grows (each floating-point step
 * is monotone), a binary search on it splits the sorted times where the pass would.
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

  /**
   * The class's submissions in (from, to] counted into `binCount` bins of `binMs` from `from`, as the
   * pass does: bin min(binCount - 1, floor((t - from - 1) / binMs)); a time whose bin is below 0 (within
   * a millisecond after `from`) is counted in none.
   */
  bins(className: string, from: number, to: number, binMs: number, binCount: number): number[] {
    const counts = new Array<number>(binCount).fill(0);
    const times = this.#times.get(className);
    if (!times) return counts;
    const lo = firstIndex(times, 0, times.length, (t) => t > from);
    const hi = firstIndex(times, lo, times.length, (t) => t > to);
    const binOf = (t: number) => Math.min(binCount - 1, Math.floor((t - from - 1) / binMs));
    let start = firstIndex(times, lo, hi, (t) => binOf(t) >= 0);
    for (let b = 0; b < binCount; b++) {
      const end = b === binCount - 1 ? hi : firstIndex(times, start, hi, (t) => binOf(t) > b);
      counts[b] = end - start;
      start = end;
    }
    return counts;
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
