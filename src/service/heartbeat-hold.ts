import type { Logger } from 'pino';
import type { Repository } from '../store/repository.ts';

/** Where the last delivered heartbeat is kept, so a restart knows how long the guard has heard nothing. */
const DELIVERED_KEY = 'heartbeat.delivered';
/** How often the delivered heartbeat is stored: the hold counts in minutes. */
const STORE_EVERY_MS = 60_000;
/** The guard reads boa's published budget over the last 24 hours (infra/budget-guard/index.mjs). */
export const GUARD_BUDGET_LOOKBACK_MS = 24 * 3_600_000;
/**
 * The buckets the guard reads that budget in: `periodFor` of its 24-hour read (infra/budget-guard/index.mjs;
 * 1,440 datapoints at most make them 2 minutes, test/service/heartbeat-hold-guard.test.ts checks the two
 * agree). It takes the newest bucket's Minimum, and the bucket holding the last delivery began less than
 * one bucket before it, whichever way CloudWatch aligns buckets (stamping a point to its minute only moves
 * older points out): so the lowest budget delivered within one bucket before the last delivery is never
 * above the one the guard reads.
 */
export const GUARD_BUDGET_BUCKET_MS = 120_000;

/**
 * The longest a node boa gives up takes to empty: the tick that chooses and cordons it stops its
 * replicas, they have the grace to exit, the tick after terminates it; and a minute for a slow call.
 * 5 minutes at the defaults (a grace of 120 s, 60 s ticks).
 */
export function nodeDrainMs(config: { terminationGraceSeconds: number; tickSeconds: number }): number {
  return (config.terminationGraceSeconds + 2 * config.tickSeconds) * 1000 + 60_000;
}

interface Delivered {
  readonly at: number;
  /**
   * The budget the guard reads while this is the last delivery: the lowest delivered within
   * GUARD_BUDGET_BUCKET_MS up to it (a raise just before a silence shares the guard's bucket with the
   * budget before it). Undefined: none was set.
   */
  readonly budget?: number;
  /** Set by the first delivery after a silence: the hold is kept until `until`, at most at `budget`. */
  readonly kept?: { readonly until: number; readonly budget: number };
}

/**
 * A boa alive whose heartbeat does not reach CloudWatch (PutMetricData failing: an outage, throttling, a
 * changed policy) looks dead to the budget guard outside it (infra/budget-guard), which then lowers the
 * node group to floor(budget / GPUs per node) every 5 minutes while boa raises it back: nodes killed and
 * launched again, jobs restarted (found in review). So once the heartbeat has gone undelivered for most
 * of the guard's silence, boa holds itself to the guard's rule, with the budget the guard reads (the
 * lowest delivered in the guard's last bucket, or the deploy budget once that is older than the guard
 * looks), until one is delivered and the guard can read it: the two agree on the size. The last delivery
 * is stored, so a restart during the silence holds as soon as the guard would act, not after a silence of
 * its own.
 */
export class HeartbeatHold {
  private last: Delivered;
  /** Deliveries with a budget within one guard bucket of the newest: what `last.budget` is the lowest of. */
  private recent: Array<{ readonly at: number; readonly budget: number }>;
  private storedAt = Number.NEGATIVE_INFINITY;
  private hold: { since: number; nodes: number } | undefined;

  constructor(
    private readonly settings: {
      /** The guard's silence (config guardMinutes); undefined: no guard to agree with, never holds. */
      readonly guardMinutes: number | undefined;
      /** The budget the guard falls back to (config budget, the deploy budget on EKS). */
      readonly deployBudget: number | undefined;
      /**
       * How long emptying a node takes at most, ms (nodeDrainMs): the hold starts at least this long
       * before the guard would act, so the nodes it gives up are empty before the guard could cut them.
       */
      readonly drainMs?: number;
      /** The tick, ms: a heartbeat goes every tick, so a gap of a tick or two is no silence. */
      readonly tickMs?: number;
    },
    private readonly repo: Pick<Repository, 'getSetting' | 'putSetting'>,
    startedAt: number,
    private readonly logger: Logger,
  ) {
    // Never stored (a first start, or no guard): counted from the start.
    this.last = repo.getSetting<Delivered>(DELIVERED_KEY) ?? { at: startedAt };
    this.recent = this.last.budget !== undefined ? [{ at: this.last.at, budget: this.last.budget }] : [];
    this.warnIfDrainIsLong();
  }

  /** A heartbeat reached CloudWatch: the metrics of the tick at `at`, with the budget published then. */
  delivered(at: number, budget: number | undefined): void {
    if (budget !== undefined && budget > 0) this.recent.push({ at, budget });
    // A put can land after a later one: the newest counts for the silence, both for the guard's bucket.
    const newest = Math.max(at, this.last.at);
    this.recent = this.recent.filter((d) => d.at >= newest - GUARD_BUDGET_BUCKET_MS);
    const lowest = this.recent.length > 0 ? Math.min(...this.recent.map((d) => d.budget)) : undefined;
    let kept = this.last.kept;
    const leadMs = this.readableLeadMs();
    const readBefore = this.read(at);
    if (leadMs !== undefined && readBefore !== undefined && at - this.last.at >= this.holdAfterMs()) {
      // The first delivery after a silence the hold was for. The guard counts only heartbeats CloudWatch
      // already returns, and this one may not be readable for a while (most likely right as an outage
      // ends): lifted now, boa's next tick raises the group and a guard run in between, seeing none,
      // cuts it (found in review). Without a long drain the hold starts `leadMs` before the guard would
      // act, trusting a heartbeat to be readable within that; it is kept as long after, at the budget the
      // guard read during the silence (the one just delivered may not be readable either).
      kept = { until: at + leadMs, budget: readBefore };
      this.logger.info(
        { event: 'heartbeat.hold-kept', keptMinutes: leadMs / 60_000 },
        'heartbeat delivered again; the hold is kept until the budget guard can read it',
      );
    }
    const changed = lowest !== this.last.budget || kept !== this.last.kept;
    this.last = { at: newest, ...optional(lowest), ...(kept !== undefined ? { kept } : {}) };
    if (this.settings.guardMinutes === undefined) return;
    // Every minute, and whenever what the guard reads changes: a restart holds to what the guard reads.
    if (!changed && newest - this.storedAt < STORE_EVERY_MS) return;
    this.storedAt = newest;
    try {
      this.repo.putSetting(DELIVERED_KEY, this.last, newest);
    } catch (error) {
      // Only a restart's knowledge of the silence is lost; the tick goes on.
      this.logger.warn({ event: 'heartbeat.store-failed', error: (error as Error).message });
    }
  }

  /**
   * The most nodes boa may ask for at `now`: the guard's rule (never below the group's minimum) while
   * the heartbeat is overdue or was delivered again only lately (`delivered`), else no limit.
   */
  nodes(now: number, budget: number | undefined, gpusPerNode: number, minSize: number): number {
    const { guardMinutes } = this.settings;
    const guardBudget = this.guardBudget(now, budget);
    if (guardMinutes === undefined || guardBudget === undefined) return this.release(now);
    const overdueMs = now - this.last.at;
    if (overdueMs < this.holdAfterMs() && !this.keptAt(now)) return this.release(now);
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

  /** Held from `leadMs` before the guard's silence ends. Never without a guard. */
  private holdAfterMs(): number {
    const { guardMinutes } = this.settings;
    const leadMs = this.leadMs();
    return guardMinutes === undefined || leadMs === undefined
      ? Number.POSITIVE_INFINITY
      : guardMinutes * 60_000 - leadMs;
  }

  /**
   * How long before the guard would act a heartbeat is trusted to be readable by it: 5 minutes (the
   * guard runs every 5 and reads the whole silence), half the silence if shorter, so a brief failure
   * holds nothing. Also how long a hold is kept once heartbeats get through again.
   */
  private readableLeadMs(): number | undefined {
    const { guardMinutes } = this.settings;
    return guardMinutes === undefined ? undefined : Math.min(5 * 60_000, (guardMinutes * 60_000) / 2);
  }

  /**
   * How long before the guard would act the hold starts: `readableLeadMs`, or a node's drain if that is
   * longer, so a node the hold gives up is empty before the guard can cut it (found in review: with a
   * grace over about 3 minutes, the guard cut nodes boa was still draining); but never so early that a
   * gap shorter than two ticks and a minute (one failed put) reads as a silence.
   */
  private leadMs(): number | undefined {
    const { guardMinutes, drainMs = 0 } = this.settings;
    const readable = this.readableLeadMs();
    if (guardMinutes === undefined || readable === undefined) return undefined;
    return Math.max(readable, Math.min(drainMs, guardMinutes * 60_000 - this.earliestHoldMs()));
  }

  /** The shortest silence a drain may move the hold to: two ticks and a minute. */
  private earliestHoldMs(): number {
    return 2 * (this.settings.tickMs ?? 60_000) + 60_000;
  }

  /** A drain that moves the hold before half the guard's silence: say so once, with what would avoid it. */
  private warnIfDrainIsLong(): void {
    const { guardMinutes, drainMs = 0 } = this.settings;
    const leadMs = this.leadMs();
    if (guardMinutes === undefined || leadMs === undefined || drainMs <= (guardMinutes * 60_000) / 2) return;
    const drainMinutes = Math.ceil(drainMs / 60_000);
    const holdAfterMinutes = ((guardMinutes * 60_000 - leadMs) / 60_000).toFixed(1);
    const advice = `give guardMinutes at least ${2 * drainMinutes}`;
    this.logger.warn(
      { event: 'heartbeat.hold-early', guardMinutes, drainMinutes },
      drainMs > leadMs
        ? `emptying a node takes up to ${drainMinutes} minutes, more than the budget guard's silence ` +
            `(guardMinutes ${guardMinutes}) leaves once boa holds (after ${holdAfterMinutes} minutes without a ` +
            `delivered heartbeat): if its heartbeat stops reaching CloudWatch, the guard can cut nodes boa is ` +
            `still emptying; ${advice}, or a shorter terminationGraceSeconds`
        : `emptying a node takes up to ${drainMinutes} minutes, over half the budget guard's silence ` +
            `(guardMinutes ${guardMinutes}): boa holds to the guard's size after ${holdAfterMinutes} minutes ` +
            `without a delivered heartbeat; ${advice} to hold later`,
    );
  }

  private keptAt(now: number): boolean {
    return this.last.kept !== undefined && now < this.last.kept.until;
  }

  /**
   * The budget the guard holds the group to, and never more than boa's own. Undefined: the guard knows
   * none and acts on nothing.
   */
  private guardBudget(now: number, budget: number | undefined): number | undefined {
    const read = this.read(now);
    if (read === undefined) return undefined;
    return budget === undefined ? read : Math.min(read, budget);
  }

  /**
   * What the guard reads at `now`: the lowest budget delivered in its last bucket (a raise since has not
   * reached it), the deploy budget once that delivery is older than the guard looks; while the hold is
   * kept after a silence, no more than the budget it read during the silence.
   */
  private read(now: number): number | undefined {
    const aged = now - this.last.at > GUARD_BUDGET_LOOKBACK_MS;
    const last = aged ? this.settings.deployBudget : (this.last.budget ?? this.settings.deployBudget);
    const kept = this.keptAt(now) ? this.last.kept?.budget : undefined;
    return last === undefined || kept === undefined ? (last ?? kept) : Math.min(last, kept);
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

function optional(budget: number | undefined): { budget?: number } {
  return budget !== undefined ? { budget } : {};
}
