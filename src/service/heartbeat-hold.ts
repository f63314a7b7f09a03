import type { Logger } from 'pino';

/**
 * A boa alive whose heartbeat does not reach CloudWatch (PutMetricData failing: an outage, throttling, a
 * changed policy) looks dead to the budget guard outside it (infra/budget-guard), which then lowers the
 * node group to floor(budget / GPUs per node) every 5 minutes while boa raises it back: nodes killed and
 * launched again, jobs restarted (found in review). So once the heartbeat has gone undelivered for most
 * of the guard's silence, boa holds itself to the guard's rule until one is delivered: the two agree on
 * the size, and what the guard finds is within what it would set.
 */
export class HeartbeatHold {
  private deliveredAt: number;
  private hold: { since: number; nodes: number } | undefined;

  constructor(
    /** The guard's silence (config guardMinutes); undefined: no guard to agree with, never holds. */
    private readonly guardMinutes: number | undefined,
    startedAt: number,
    private readonly logger: Logger,
  ) {
    // Counted from the start: a boa that never gets one through is silent to the guard from then.
    this.deliveredAt = startedAt;
  }

  /** A heartbeat reached CloudWatch (the metrics of the tick at `at` were published). */
  delivered(at: number): void {
    this.deliveredAt = Math.max(this.deliveredAt, at);
    if (this.hold === undefined) return;
    this.logger.info(
      { event: 'heartbeat.hold-released', heldMinutes: (at - this.hold.since) / 60_000 },
      'heartbeat delivered again; the budget guard sees boa, the hold is lifted',
    );
    this.hold = undefined;
  }

  /**
   * The most nodes boa may ask for at `now`: the guard's rule (never below the group's minimum) while
   * the heartbeat is overdue, else no limit. Held from half the guard's silence, or 5 minutes before it
   * ends if that is later: the guard runs every 5 minutes and reads the whole silence.
   */
  nodes(now: number, budget: number | undefined, gpusPerNode: number, minSize: number): number {
    if (this.guardMinutes === undefined || budget === undefined) return Number.POSITIVE_INFINITY;
    const silenceMs = this.guardMinutes * 60_000;
    const holdAfterMs = Math.max(silenceMs / 2, silenceMs - 5 * 60_000);
    const overdueMs = now - this.deliveredAt;
    if (overdueMs < holdAfterMs) return Number.POSITIVE_INFINITY;
    // The guard's own arithmetic (infra/budget-guard/index.mjs allowedNodes).
    const nodes = Math.max(minSize, Math.floor(budget / gpusPerNode + 1e-9));
    if (this.hold === undefined) {
      this.logger.warn(
        {
          event: 'heartbeat.hold',
          undeliveredMinutes: overdueMs / 60_000,
          guardMinutes: this.guardMinutes,
          nodes,
        },
        "heartbeat not reaching CloudWatch: holding the group to the budget guard's size until it does",
      );
    }
    this.hold = { since: this.hold?.since ?? now, nodes };
    return nodes;
  }

  /** The hold in force at the last tick, if any: since when, and to how many nodes. */
  get holding(): { readonly since: number; readonly nodes: number } | undefined {
    return this.hold;
  }
}
