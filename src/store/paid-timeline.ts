/**
 * The GPUs paid as a step function of time, with its running integral: a node adds its GPUs at its
 * launch and takes them back when it is gone, and the GPU-time paid over [from, to] is the integral at
 * `to` less the integral at `from`, each found by binary search over the steps. The spend ceiling asks
 * for 81 starts every tick once the budget window is full; summing every node for each start made that
 * a pass over the nodes per tick plus a pass over the starts per node that changed within the last
 * three hours.
 *
 * Times and GPU counts are integers in the ledger, so every level and integral is an integer below
 * 2^53 (5,000 GPUs for 50 years), and a sum from a whole millisecond (past the window, every one of
 * the ceiling's look-backs) equals the per-node one exactly, whatever the order of the terms.
 */
export class PaidTimeline {
  /** The steps, by time (steps at one time in the order they came). */
  private readonly times: number[] = [];
  private readonly deltas: number[] = [];
  /** GPUs paid just after each step and GPU-time paid from `baseTime` to it; valid below `valid`. */
  private readonly levels: number[] = [];
  private readonly areas: number[] = [];
  private valid = 0;
  /** GPUs paid at `baseTime`: the steps at or before it, folded (no query starts before it). */
  private baseLevel = 0;

  /**
   * `baseTime`: no query starts before it. `foldAfter`: the steps before the earliest start are kept
   * until there are this many (tests fold sooner).
   */
  constructor(
    private baseTime: number,
    private readonly foldAfter = 1024,
  ) {}

  /** `gpus` paid from `time` on (negative: no longer paid). */
  add(time: number, gpus: number): void {
    if (time <= this.baseTime) {
      this.baseLevel += gpus;
      this.valid = 0;
      return;
    }
    const at = this.after(time);
    this.times.splice(at, 0, time);
    this.deltas.splice(at, 0, gpus);
    this.levels.splice(at, 0, 0);
    this.areas.splice(at, 0, 0);
    this.valid = Math.min(this.valid, at);
  }

  /** Takes back a step added before (a node listed again is no longer gone). */
  remove(time: number, gpus: number): void {
    if (time <= this.baseTime) {
      this.baseLevel -= gpus;
      this.valid = 0;
      return;
    }
    let at = this.after(time) - 1;
    while (at >= 0 && this.times[at] === time && this.deltas[at] !== gpus) at -= 1;
    if (at < 0 || this.times[at] !== time) throw new Error(`no step of ${gpus} GPUs at ${time} to remove`);
    this.times.splice(at, 1);
    this.deltas.splice(at, 1);
    this.levels.splice(at, 1);
    this.areas.splice(at, 1);
    this.valid = Math.min(this.valid, at);
  }

  /** GPU-time paid over [from, to]; `from` is not before the base time. */
  paid(from: number, to: number): number {
    if (from >= to) return 0;
    this.derive();
    return this.integral(to) - this.integral(from);
  }

  /** Paid over [from, to] for each of `froms`, the integral at `to` found once. */
  paidFrom(froms: readonly number[], to: number): number[] {
    this.derive();
    const end = this.integral(to);
    return froms.map((from) => (from >= to ? 0 : end - this.integral(from)));
  }

  /**
   * No query will start before `time` any more: the steps up to it become the base level, once they
   * are many (a tick's steps would otherwise shift the arrays every tick).
   */
  foldBefore(time: number): void {
    const count = this.after(time);
    if (count <= this.foldAfter || count * 2 <= this.times.length) return;
    this.derive();
    // Rebased on the last folded step's time, not on `time`: integrals stay integers.
    const last = count - 1;
    const area = this.areas[last] as number;
    this.baseTime = this.times[last] as number;
    this.baseLevel = this.levels[last] as number;
    for (const list of [this.times, this.deltas, this.levels, this.areas]) list.splice(0, count);
    for (let i = 0; i < this.areas.length; i++) this.areas[i] = (this.areas[i] as number) - area;
  }

  /** Index of the first step after `time`. */
  private after(time: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private derive(): void {
    const { times, deltas, levels, areas } = this;
    let i = this.valid;
    let time = i === 0 ? this.baseTime : (times[i - 1] as number);
    let level = i === 0 ? this.baseLevel : (levels[i - 1] as number);
    let area = i === 0 ? 0 : (areas[i - 1] as number);
    for (; i < times.length; i++) {
      const at = times[i] as number;
      area += level * (at - time);
      level += deltas[i] as number;
      time = at;
      areas[i] = area;
      levels[i] = level;
    }
    this.valid = times.length;
  }

  /** GPU-time paid from the base time to `time` (not before it). */
  private integral(time: number): number {
    const k = this.after(time) - 1;
    if (k < 0) return this.baseLevel * (time - this.baseTime);
    return (this.areas[k] as number) + (this.levels[k] as number) * (time - (this.times[k] as number));
  }
}
