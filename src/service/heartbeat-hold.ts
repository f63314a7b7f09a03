import type { Logger } from 'pino';
import type { Repository } from '../store/repository.ts';

/** Where the last delivered heartbeat is kept, so a restart knows how long the guard has heard nothing. */
const DELIVERED_KEY = 'heartbeat.delivered';
/** How often the delivered heartbeat is stored: the hold counts in minutes. */
const STORE_EVERY_MS = 60_000;
/** The guard reads boa's published budget over the last 24 hours (infra/budget-guard/index.mjs). */
const GUARD_BUDGET_LOOKBACK_MS = 24 * 3_600_000;

interface Delivered {
  readonly at: number;
  /** The budget that went out with it (what the guard reads); undefined: none was set. */
  readonly budget?: number;
}

/**
 * A boa alive whose heartbeat does not reach CloudWatch (PutMetricData failing: an outage, throttling, a
 * changed policy) looks dead to the budget guard outside it (infra/budget-guard), which then lowers the
 * node group to floor(budget / GPUs per node) every 5 minutes while boa raises it back: nodes killed and
 * launched again, jobs restarted (found in review). So once the heartbeat has gone undelivered for most
 * of the guard's silence, boa holds itself to the guard's rule, with the budget the guard reads (the
 * last one delivered, or the deploy budget once that is older than the guard looks), until one is
 * delivered: the two agree on the size. The last delivery is stored, so a restart during the silence
 * holds as soon as the guard would act, not after a silence of its own.
 */
export class HeartbeatHold {
  private last: Delivered;
  private storedAt = Number.NEGATIVE_INFINITY;
  private hold: { since: number; nodes: number } | undefined;

  constructor(
    private readonly settings: {
      /** The guard's silence (config guardMinutes); undefined: no guard to agree with, never holds. */
      readonly guardMinutes: number | undefined;
      /** The budget the guard falls back to (config budget, the deploy budget on EKS). */
      readonly deployBudget: number | undefined;
    },
    private readonly repo: Pick<Repository, 'getSetting' | 'putSetting'>,
    startedAt: number,
    private readonly logger: Logger,
  ) {
    // Never stored (a first start, or no guard): counted from the start.
    this.last = repo.getSetting<Delivered>(DELIVERED_KEY) ?? { at: startedAt };
  }

  /** A heartbeat reached CloudWatch: the metrics of the tick at `at`, with the budget published then. */
  delivered(at: number, budget: number | undefined): void {
    // A put can land after a later one: the newest delivery counts.
    if (at < this.last.at) return;
    this.last = { at, ...(budget !== undefined && budget > 0 ? { budget } : {}) };
    if (this.settings.guardMinutes === undefined || at - this.storedAt < STORE_EVERY_MS) return;
    this.storedAt = at;
    try {
      this.repo.putSetting(DELIVERED_KEY, this.last, at);
    } catch (error) {
      // Only a restart's knowledge of the silence is lost; the tick goes on.
      this.logger.warn({ event: 'heartbeat.store-failed', error: (error as Error).message });
    }
  }

  /**
   * The most nodes boa may ask for at `now`: the guard's rule (never below the group's minimum) while
   * the heartbeat is overdue, else no limit. Held from half the guard's silence, or 5 minutes before it
   * ends if that is later: the guard runs every 5 minutes and reads the whole silence.
   */
  nodes(now: number, budget: number | undefined, gpusPerNode: number, minSize: number): number {
    const { guardMinutes } = this.settings;
    const guardBudget = this.guardBudget(now, budget);
    if (guardMinutes === undefined || guardBudget === undefined) return this.release(now);
    const silenceMs = guardMinutes * 60_000;
    const holdAfterMs = Math.max(silenceMs / 2, silenceMs - 5 * 60_000);
    const overdueMs = now - this.last.at;
    if (overdueMs < holdAfterMs) return this.release(now);
    // The guard's own arithmetic (infra/budget-guard/index.mjs allowedNodes).
    const nodes = Math.max(minSize, Math.floor(guardBudget / gpusPerNode + 1e-9));
    if (this.hold === undefined) {
      this.logger.warn(
        { event: 'heartbeat.hold', undeliveredMinutes: overdueMs / 60_000, guardMinutes, nodes },
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

  /**
   * The budget the guard holds the group to: the one last delivered (a raise since has not reached
   * it), the deploy budget once that delivery is older than the guard looks, and never more than boa's
   * own. Undefined: the guard knows none and acts on nothing.
   */
  private guardBudget(now: number, budget: number | undefined): number | undefined {
    const aged = now - this.last.at > GUARD_BUDGET_LOOKBACK_MS;
    const read = aged ? this.settings.deployBudget : (this.last.budget ?? this.settings.deployBudget);
    if (read === undefined) return undefined;
    return budget === undefined ? read : Math.min(read, budget);
  }

  private release(now: number): number {
    if (this.hold !== undefined) {
      this.logger.info(
        { event: 'heartbeat.hold-released', heldMinutes: (now - this.hold.since) / 60_000 },
        'heartbeat delivered again; the budget guard sees boa, the hold is lifted',
      );
      this.hold = undefined;
    }
    return Number.POSITIVE_INFINITY;
  }
}
