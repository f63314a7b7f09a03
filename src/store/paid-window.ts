/** One ledger node as the paid sum reads it: GPUs held from launch until gone (open: until now). */
export interface PaidSpan {
  readonly id: string;
  readonly gpus: number;
  readonly launchedAt: number;
  goneAt: number | null;
}

/**
 * The ledger's paid GPU-time, mirrored in memory for the spend ceiling's query every tick: the same sum
 * as the SQL over ledger_nodes, without SQLite evaluating a row per node (a few thousand at 1,000 jobs).
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

  constructor(
    spans: Iterable<PaidSpan>,
    private heldFrom: number,
  ) {
    const closed: PaidSpan[] = [];
    for (const span of spans) {
      if (span.goneAt === null) this.open.set(span.id, span);
      else closed.push(span);
    }
    closed.sort((a, b) => (a.goneAt as number) - (b.goneAt as number));
    for (const span of closed) this.hold(span);
  }

  /** A node the store has just opened (or reopened): `span` as its row now reads. */
  opened(span: PaidSpan): void {
    const was = this.closedById.get(span.id);
    if (was) {
      // Left in the closed list, skipped by its reset goneAt: the list stays in closing order.
      was.goneAt = null;
      this.closedById.delete(span.id);
    }
    this.open.set(span.id, { ...span, goneAt: null });
  }

  /** A node the store has just closed at `at`. */
  closedAt(id: string, at: number): void {
    const span = this.open.get(id);
    if (!span) return;
    this.open.delete(id);
    span.goneAt = at;
    this.hold(span);
  }

  /**
   * Paid GPU-milliseconds over [from, to], or undefined when `from` is before what is held. Forgets
   * nothing: a span asked for now and then (a ledger bucket near now, a window average) must not drop
   * what the ceiling's look-backs, every tick, still read.
   */
  paidGpuMs(from: number, to: number): number | undefined {
    return this.paidGpuMsFrom([from], to, false)?.[0];
  }

  /**
   * Paid GPU-milliseconds over [from, to] for each of `froms` in one pass, or undefined when one is
   * before what is held. The earliest start forgets what ended before it (unless `forget` is false):
   * later queries may still reach back to it.
   */
  paidGpuMsFrom(froms: readonly number[], to: number, forget = true): number[] | undefined {
    const earliest = Math.min(...froms);
    if (earliest < this.heldFrom) return undefined;
    if (forget) this.forgetBefore(earliest);
    const latest = Math.max(...froms);
    const sums = froms.map(() => 0);
    // Only spans that start or end between the earliest and the latest start differ from one start to
    // the next: one launched after every start adds the same to each, and one covering them all adds
    // gpus x (end - from), summed once and spread at the end.
    let common = 0;
    let coverGpus = 0;
    let coverGpuMsAfterEarliest = 0;
    const add = (gpus: number, launchedAt: number, end: number) => {
      if (launchedAt >= latest) {
        common += gpus * Math.max(0, end - launchedAt);
        return;
      }
      if (launchedAt <= earliest && end >= latest) {
        coverGpus += gpus;
        coverGpuMsAfterEarliest += gpus * (end - earliest);
        return;
      }
      for (let i = 0; i < froms.length; i++)
        sums[i] = (sums[i] as number) + gpus * Math.max(0, end - Math.max(launchedAt, froms[i] as number));
    };
    for (const span of this.open.values()) add(span.gpus, span.launchedAt, to);
    for (let i = this.head; i < this.closed.length; i++) {
      const span = this.closed[i] as PaidSpan;
      const gone = span.goneAt;
      // Reopened spans (goneAt reset) are counted with the open ones.
      if (gone === null || gone <= earliest) continue;
      add(span.gpus, span.launchedAt, Math.min(gone, to));
    }
    return sums.map(
      (sum, i) => sum + common + coverGpuMsAfterEarliest - ((froms[i] as number) - earliest) * coverGpus,
    );
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
  }
}
