import { PaidTimeline } from './paid-timeline.ts';

/** One ledger node as the paid sum reads it: GPUs held from launch until gone (open: until now). */
export interface PaidSpan {
  readonly id: string;
  readonly gpus: number;
  readonly launchedAt: number;
  goneAt: number | null;
}

/**
 * The ledger's paid GPU-time, mirrored in memory for the spend ceiling's query every tick: the same sum
 * as the SQL over ledger_nodes, without SQLite evaluating a row per node (a few thousand at 1,000 jobs),
 * kept as a timeline of GPUs paid (paid-timeline.ts) so a query costs a binary search per start.
 * It holds the open nodes and the closed ones that may still overlap a query starting at `heldFrom` or
 * later; a query reaching further back returns undefined and the caller asks the store.
 */
export class PaidWindow {
  private readonly open = new Map<string, PaidSpan>();
  /** Closed spans in the order they were closed; those before `head` no longer overlap any query. */
  private closed: PaidSpan[] = [];
  private head = 0;
  /** Closed spans still held, by node id (a node listed again is reopened with its first launch). */
  private readonly closedById = new Map<string, PaidSpan>();
  private readonly timeline: PaidTimeline;

  constructor(
    spans: Iterable<PaidSpan>,
    private heldFrom: number,
    foldAfter?: number,
  ) {
    this.timeline = new PaidTimeline(heldFrom, foldAfter);
    const closed: PaidSpan[] = [];
    for (const span of spans) {
      if (span.goneAt === null) this.open.set(span.id, span);
      else closed.push(span);
      this.count(span);
    }
    closed.sort((a, b) => (a.goneAt as number) - (b.goneAt as number));
    for (const span of closed) this.hold(span);
  }

  /** A node the store has just opened (or reopened): `span` as its row now reads. */
  opened(span: PaidSpan): void {
    const was = this.closedById.get(span.id);
    if (was) {
      // Left in the closed list, skipped by its reset goneAt: the list stays in closing order.
      this.uncount(was);
      was.goneAt = null;
      this.closedById.delete(span.id);
    }
    const open = this.open.get(span.id);
    if (open) this.uncount(open);
    const reopened = { ...span, goneAt: null };
    this.open.set(span.id, reopened);
    this.count(reopened);
  }

  /** A node the store has just closed at `at`. */
  closedAt(id: string, at: number): void {
    const span = this.open.get(id);
    if (!span) return;
    this.open.delete(id);
    span.goneAt = at;
    this.hold(span);
    // Its launch step stands; it stops paying at `at` (pays nothing if that is not after its launch).
    if (at > span.launchedAt) this.timeline.add(at, -span.gpus);
    else this.timeline.remove(span.launchedAt, span.gpus);
  }

  /**
   * Paid GPU-milliseconds over [from, to], or undefined when `from` is before what is held. Forgets
   * nothing: a span asked for now and then (a ledger bucket near now, a window average) must not drop
   * what the ceiling's look-backs, every tick, still read.
   */
  paidGpuMs(from: number, to: number): number | undefined {
    return from < this.heldFrom ? undefined : this.timeline.paid(from, to);
  }

  /**
   * Paid GPU-milliseconds over [from, to] for each of `froms`, or undefined when one is before what is
   * held. The earliest start forgets what ended before it (unless `forget` is false): later queries may
   * still reach back to it.
   */
  paidGpuMsFrom(froms: readonly number[], to: number, forget = true): number[] | undefined {
    const earliest = Math.min(...froms);
    if (earliest < this.heldFrom) return undefined;
    if (forget) this.forgetBefore(earliest);
    return this.timeline.paidFrom(froms, to);
  }

  /**
   * A span's steps: its GPUs from launch, back when gone. A span gone before its launch (a clock ahead
   * of the store's) pays nothing, as the SQL's max(0, ...) says.
   */
  private count(span: PaidSpan): void {
    const { gpus, launchedAt, goneAt } = span;
    if (goneAt !== null && goneAt <= launchedAt) return;
    this.timeline.add(launchedAt, gpus);
    if (goneAt !== null) this.timeline.add(goneAt, -gpus);
  }

  private uncount(span: PaidSpan): void {
    const { gpus, launchedAt, goneAt } = span;
    if (goneAt !== null && goneAt <= launchedAt) return;
    this.timeline.remove(launchedAt, gpus);
    if (goneAt !== null) this.timeline.remove(goneAt, -gpus);
  }

  private hold(span: PaidSpan): void {
    this.closed.push(span);
    this.closedById.set(span.id, span);
  }

  /** Spans closed by `from` overlap no later query: dropped, and `from` becomes the earliest answered. */
  private forgetBefore(from: number): void {
    while (this.head < this.closed.length) {
      const span = this.closed[this.head] as PaidSpan;
      if (span.goneAt !== null && span.goneAt > from) break;
      if (this.closedById.get(span.id) === span) this.closedById.delete(span.id);
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.closed.length) {
      this.closed = this.closed.slice(this.head);
      this.head = 0;
    }
    this.heldFrom = Math.max(this.heldFrom, from);
    this.timeline.foldBefore(this.heldFrom);
  }
}
