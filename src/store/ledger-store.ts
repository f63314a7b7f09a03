/**
 * The ledger: GPUs paid (nodes, from launch until seen gone) and allocated (jobs, as samples) over time,
 * the record the budget is kept against. Apart from the rest of the store because it keeps mirrors in
 * memory, each reloaded after a transaction rolls back (Repository.transaction): the nodes still open,
 * so a tick writes only what changed; where allocated time resumes, so samples never overlap; and the
 * window's paid sum the spend ceiling reads every tick (paid-window.ts).
 */
import type { prepareHot } from './hot-statements.ts';
import { ClassHours } from './class-hours.ts';
import { PaidTimeline } from './paid-timeline.ts';
import { type PaidSpan, PaidWindow } from './paid-window.ts';

/** The setting that keeps when the last listing the ledger stored was taken. */
const LISTED_AT = 'ledgerListedAt';

export class LedgerStore {
  /** Ledger nodes not yet gone, so a tick writes only what changed. */
  private readonly openNodes = new Set<string>();
  /** End of the latest allocation sample: a new sample starts no earlier, so samples never overlap. */
  private allocationCursor = Number.NEGATIVE_INFINITY;
  /** The paid sum of ledger_nodes mirrored in memory, loaded at the first query (paid-window.ts). */
  private paidWindow: PaidWindow | undefined;
  /** Each class's allocated GPU-time of whole past hours (class-hours.ts). */
  private readonly classHours: ClassHours;
  /** True while the mirrors may hold what a rollback took back (reloadAtNextUse). */
  private stale = false;

  constructor(private readonly hot: ReturnType<typeof prepareHot>) {
    this.classHours = new ClassHours((from, to) => this.classGpuMsFromSamples(from, to));
    this.reload();
  }

  /**
   * Re-reads the mirrors from the store: at start, and at the first use after a rollback took back what
   * they noted. Read before anything is changed: one that fails leaves them to be read again.
   */
  private reload(): void {
    const open = this.hot.openNodeIds.all() as string[];
    // A sample rolled back leaves its interval to the next one to record.
    const cursor = (this.hot.lastAllocationTo.get() as number | null) ?? Number.NEGATIVE_INFINITY;
    this.openNodes.clear();
    for (const id of open) this.openNodes.add(id);
    this.allocationCursor = cursor;
    this.stale = false;
  }

  /**
   * After a rollback: the mirrors are re-read at their next use, not now. A disk that failed the write
   * may fail that read too, which then left them half cleared: nodes gone never closed (paid on), the
   * next allocation sample starting after the rolled-back one's interval (lost).
   */
  reloadAtNextUse(): void {
    this.stale = true;
    this.paidWindow = undefined;
    this.classHours.clear();
  }

  private fresh(): void {
    if (this.stale) this.reload();
  }

  /**
   * Records the nodes listed now: new ones from their launch time, and ones no longer listed as gone at
   * `goneAt` of their row (service/gone-nodes.ts: when their termination ended, if known), never after
   * now; without it, now (billing is counted until the service sees a node gone, never less).
   */
  observeNodes(
    nodes: ReadonlyArray<{ id: string; gpus: number; launchedAt: number }>,
    now: number,
    goneAt?: (node: PaidSpan & { readonly lastListedAt: number | undefined }) => number,
  ): void {
    this.fresh();
    const lastListedAt = this.lastListedAt();
    const listed = new Set<string>();
    for (const node of nodes) {
      listed.add(node.id);
      if (!this.openNodes.has(node.id)) {
        this.hot.openNode.run(node.id, node.gpus, node.launchedAt, now);
        this.openNodes.add(node.id);
        // As the row now reads: a node listed again keeps its first launch and GPU count.
        this.paidWindow?.opened(this.hot.nodeSpan.get(node.id) as PaidSpan);
      }
    }
    for (const id of this.openNodes) {
      if (!listed.has(id)) {
        const span = this.hot.nodeSpan.get(id) as PaidSpan;
        const at = goneAt ? Math.min(now, goneAt({ ...span, lastListedAt })) : now;
        // last_seen_at keeps the tick that saw it gone.
        this.hot.closeNode.run(at, now, id);
        this.openNodes.delete(id);
        this.paidWindow?.closedAt(id, at);
      }
    }
    this.hot.putSetting.run(LISTED_AT, JSON.stringify(now), now);
  }

  /**
   * When the last listing the ledger stored was taken (observeNodes' `now`); undefined before the
   * first. Every node open since was in it (a listing ends the open nodes it does not show), so it is
   * each one's last listing: after a restart the scheduler's is the last tick, which may be long after
   * it (listings failing, then kill -9).
   */
  lastListedAt(): number | undefined {
    const stored = this.hot.setting.get(LISTED_AT) as string | undefined;
    return stored === undefined ? undefined : (JSON.parse(stored) as number);
  }

  /**
   * Charges nodes no listing showed (service/unseen-nodes.ts) from launch to gone, those the ledger has
   * no row for; returns the ids charged.
   */
  chargeUnseenNodes(spans: ReadonlyArray<PaidSpan & { goneAt: number }>, now: number): string[] {
    const charged: string[] = [];
    for (const span of spans) {
      if (this.hot.chargeNode.run(span.id, span.gpus, span.launchedAt, now, span.goneAt).changes === 0)
        continue;
      charged.push(span.id);
      this.paidWindow?.opened({ ...span, goneAt: null });
      this.paidWindow?.closedAt(span.id, span.goneAt);
    }
    return charged;
  }

  /** GPU-milliseconds paid (nodes) and allocated (jobs) within [from, to]; open intervals run to `to`. */
  ledgerTotals(from: number, to: number): { paidGpuMs: number; allocatedGpuMs: number } {
    const allocated = this.hot.allocatedGpuMs.get({ from, to }) as { v: number | null };
    return { paidGpuMs: this.paidGpuMs(from, to), allocatedGpuMs: allocated.v ?? 0 };
  }

  /**
   * ledgerTotals for any number of spans within [from, now], the rows read once into a timeline each
   * (paid-timeline.ts): GET /v1/ledger asks for a thousand spans (500 buckets and their window
   * averages), and each through SQL read every sample from its start on (1.7 s for 72 hours of 10 s ticks).
   * A span must not start before `from`.
   */
  totalsFrom(from: number): (start: number, end: number) => { paidGpuMs: number; allocatedGpuMs: number } {
    const paid = new PaidTimeline(from);
    for (const span of this.hot.nodeSpansSince.all(from) as PaidSpan[]) {
      // As the SQL's max(0, ...): a node gone before its launch (a clock ahead of the store's) paid nothing.
      if (span.goneAt !== null && span.goneAt <= span.launchedAt) continue;
      paid.add(span.launchedAt, span.gpus);
      if (span.goneAt !== null) paid.add(span.goneAt, -span.gpus);
    }
    const allocated = new PaidTimeline(from);
    for (const sample of this.allocationSince(from)) {
      if (sample.to <= sample.from) continue;
      allocated.add(sample.from, sample.gpus);
      allocated.add(sample.to, -sample.gpus);
    }
    return (start, end) => ({ paidGpuMs: paid.paid(start, end), allocatedGpuMs: allocated.paid(start, end) });
  }

  /** Paid GPU-milliseconds over [from, to] alone; forgets nothing the spend ceiling's query reads. */
  paidGpuMs(from: number, to: number): number {
    // Held from where the ceiling's first query starts it, not from a span asked for before that.
    return (
      this.paidWindow?.paidGpuMs(from, to) ??
      (this.hot.paidGpuMs.get({ from, to }) as { v: number | null }).v ??
      0
    );
  }

  /** Ids of the ledger's nodes not yet gone: the billed nodes of the last listing it stored. */
  openNodeIds(): string[] {
    return this.hot.openNodeIds.all() as string[];
  }

  /** When each of the ledger's nodes not yet gone is paid from (its open row's launch), by node id. */
  openNodesPaidSince(): Map<string, number> {
    // No node is gone after the largest time: the rows this returns are the open ones.
    const rows = this.hot.nodeSpansSince.all(Number.MAX_SAFE_INTEGER) as PaidSpan[];
    return new Map(rows.map((r) => [r.id, r.launchedAt]));
  }

  /** GPUs of the ledger's nodes not yet gone: what it books as paid now. */
  openNodeGpus(): number {
    return this.hot.openNodeGpus.get() as number;
  }

  /** The ledger's nodes paid after `from`: GPUs from launch until gone (null: paid still). */
  paidSpansSince(from: number): Array<{ gpus: number; launchedAt: number; goneAt: number | null }> {
    return this.hot.nodeSpansSince.all(from) as PaidSpan[];
  }

  /** Paid GPU-milliseconds over [from, to] for each of `froms`: the spend ceiling's query, every tick. */
  paidGpuMsFrom(froms: readonly number[], to: number): number[] {
    const earliest = Math.min(...froms);
    this.paidWindow ??= new PaidWindow(this.hot.nodeSpansSince.all(earliest) as PaidSpan[], earliest);
    return (
      this.paidWindow.paidGpuMsFrom(froms, to) ??
      froms.map((from) => (this.hot.paidGpuMs.get({ from, to }) as { v: number | null }).v ?? 0)
    );
  }

  /**
   * Stores allocated GPUs over [from, to]. A sample never reaches back before the end of the latest
   * one (a restart resuming from an older cursor would count that time twice), so samples never overlap.
   */
  recordAllocation(
    from: number,
    to: number,
    gpus: number,
    expectedGpus: number | null = null,
    gpusByClass: Readonly<Record<string, number>> | null = null,
  ): void {
    this.fresh();
    const start = Math.max(from, this.allocationCursor);
    if (to <= start) return;
    const byClass = gpusByClass === null ? null : JSON.stringify(gpusByClass);
    this.hot.allocation.run(start, to, gpus, expectedGpus, byClass);
    this.allocationCursor = to;
  }

  /** Each class's allocated GPU-milliseconds over [from, to], from the samples that kept classes. */
  allocatedGpuMsByClass(from: number, to: number): Map<string, number> {
    this.fresh();
    return this.classHours.byClass(from, to, this.allocationCursor);
  }

  private classGpuMsFromSamples(from: number, to: number): Map<string, number> {
    const rows = this.hot.allocatedGpuMsByClass.all({ from, to }) as Array<{
      className: string;
      gpuMs: number;
    }>;
    return new Map(rows.filter((r) => r.gpuMs > 0).map((r) => [r.className, r.gpuMs]));
  }

  /** Allocation samples that end after `from`, oldest first (the demand ratio's evidence). */
  allocationSince(
    from: number,
  ): Array<{ from: number; to: number; gpus: number; expectedGpus: number | null }> {
    return this.hot.allocationSince.all(from) as Array<{
      from: number;
      to: number;
      gpus: number;
      expectedGpus: number | null;
    }>;
  }

  /** End of the latest allocation sample, if any: where the ledger's allocated time resumes. */
  lastAllocationTo(): number | undefined {
    this.fresh();
    return Number.isFinite(this.allocationCursor) ? this.allocationCursor : undefined;
  }
}
