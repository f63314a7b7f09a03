/**
 * Holding the paid time-average at the budget. Two parts:
 * - feed-forward: the plan allocates GPU-time but the bill counts node time, so plan with
 *   budget / (paid / allocated), the ratio estimated online (paid-ratio.ts); optionally (the service's
 *   opt-in, off by default) online rates lagging the arrivals make the plans in force allocate more
 *   than they expect, and the budget is also divided by that demand ratio (core/demand-ratio.ts);
 * - feedback on the run's own average (off by default, as in the service, where the spend ceiling
 *   holds a surplus back): a surplus so far (paid - budget x elapsed) is paid back over
 *   `paybackSeconds`. A deficit (budget unspent in a lull or at the start) may be caught up over
 *   `catchUpSeconds`, but by default it is not (Infinity): the budget it banked was then spent on the
 *   drain after a burst, widening the last long jobs on half-empty nodes, which paid 1.5x-1.8x the
 *   budget per hour of arrivals on the 8-hour workloads and bought little JCT (docs/comparison.md).
 * The planning budget stays within [minFactor, maxFactor] x budget / ratio; the plan is raised to the
 * minimum feasible budget after (core/planning-budget.ts, policy.ts).
 */
import { DEFAULT_DEMAND_RATIO, DemandRatio } from '../../../core/demand-ratio.ts';
import { PaidRatioEstimator, type PaidRatioOptions } from './paid-ratio.ts';

export interface BudgetControlOptions {
  readonly catchUpSeconds: number;
  readonly paybackSeconds: number;
  readonly minFactor: number;
  readonly maxFactor: number;
  readonly paidRatio: Omit<PaidRatioOptions, 'priorGpus'>;
  /**
   * Half-life of the demand ratio (GPU-seconds allocated / GPU-seconds the plans in force expected);
   * 0: not used. Online rates lag the arrivals (the service's prior counts as hours of no arrivals), so
   * a plan allocates more or less than it expects; planning with budget / demand corrects that from
   * what is observed, whatever the cause.
   */
  readonly demandHalfLifeSeconds: number;
  /**
   * The demand ratio is used no lower than this. 1 (default): plans that allocate more than they
   * expected (rates read low) narrow, but allocating less (a lull, the drain) never widens the rest.
   */
  readonly demandFloor: number;
}

/**
 * The service's control: budget / (paid / allocated) alone. The demand ratio is the service's opt-in
 * (`demandHalfLifeHours`, boa@demandH); a surplus is held back by the spend ceiling, as in the
 * service, not paid back over hours (both were the simulator's own until 2026-11-29).
 */
export const DEFAULT_BUDGET_CONTROL: BudgetControlOptions = {
  catchUpSeconds: Number.POSITIVE_INFINITY,
  paybackSeconds: Number.POSITIVE_INFINITY,
  demandHalfLifeSeconds: 0,
  demandFloor: 1,
  minFactor: 0.2,
  maxFactor: 3,
  paidRatio: {
    priorRatio: 1,
    priorSeconds: 3600,
    halfLifeSeconds: 12 * 3600,
    releaseLagSeconds: 30,
  },
};

export class BudgetControl {
  readonly #ratio: PaidRatioEstimator;
  readonly #demand: DemandRatio;
  #paid = 0;
  #start: number | undefined;
  #now = 0;
  /** (time, paid so far) at each observation, for the paid total over a sliding window. */
  readonly #history: { at: number; paid: number }[] = [];

  constructor(
    readonly budget: number,
    readonly options: BudgetControlOptions = DEFAULT_BUDGET_CONTROL,
  ) {
    this.#ratio = new PaidRatioEstimator({ ...options.paidRatio, priorGpus: budget });
    // The service's rule (core/demand-ratio.ts), its prior as long as the paid ratio's.
    this.#demand = new DemandRatio(
      {
        ...DEFAULT_DEMAND_RATIO,
        halfLifeSeconds: options.demandHalfLifeSeconds,
        floor: options.demandFloor,
        priorSeconds: options.paidRatio.priorSeconds,
      },
      budget,
    );
  }

  /** Allocated over expected by the plans in force (1 when not used). */
  demand(): number {
    return this.#demand.ratio();
  }

  ratio(): number {
    return this.#ratio.ratio();
  }

  /** Paid so far over the time since the first observation, GPU-hours per hour. */
  paidAverage(): number {
    const elapsed = this.#now - (this.#start ?? this.#now);
    return elapsed > 0 ? this.#paid / elapsed : 0;
  }

  /** Books a tick (see PaidRatioEstimator.observe). */
  observe(
    now: number,
    nodeGpus: ReadonlyMap<number, number>,
    allocatedGpuSeconds: number,
    expectedGpuSeconds = allocatedGpuSeconds,
  ): void {
    this.#demand.observe(now, allocatedGpuSeconds, expectedGpuSeconds);
    this.#start ??= now;
    this.#now = now;
    this.#paid += this.#ratio.observe(now, nodeGpus, allocatedGpuSeconds);
    this.#history.push({ at: now, paid: this.#paid });
  }

  /** Seconds since the first observation. */
  elapsedSeconds(): number {
    return this.#now - (this.#start ?? this.#now);
  }

  /**
   * GPU-seconds paid in the last `seconds` (since the first observation while the run is shorter):
   * what the service's ledger gives its spend ceiling. Paid accrues evenly between observations.
   */
  paidInLast(seconds: number): number {
    return this.#paid - this.#paidAt(Math.max(this.#start ?? this.#now, this.#now - seconds));
  }

  /** Drops what no look-back of at most `seconds` can ask for again (the run only moves forward). */
  forgetBefore(seconds: number): void {
    const start = this.#now - seconds;
    let drop = 0;
    while (drop + 1 < this.#history.length && (this.#history[drop + 1]?.at as number) <= start) drop++;
    if (drop > 0) this.#history.splice(0, drop);
  }

  #paidAt(at: number): number {
    const history = this.#history;
    // The last observation at or before `at` (binary search), and the paid between it and the next.
    let low = 0;
    let high = history.length - 1;
    if (high < 0 || (history[0]?.at as number) > at) return 0;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if ((history[mid]?.at as number) <= at) low = mid;
      else high = mid - 1;
    }
    const before = history[low] as { at: number; paid: number };
    const after = history[low + 1];
    if (!after || after.at <= before.at) return before.paid;
    return before.paid + ((after.paid - before.paid) * (at - before.at)) / (after.at - before.at);
  }

  /**
   * The budget to plan with now, before the minimum: what the service's planInputs hands
   * core/planning-budget.ts as `controlBudget`, which raises it to the minimum where a credit applies.
   */
  controlBudget(): number {
    const { catchUpSeconds, paybackSeconds, minFactor, maxFactor } = this.options;
    const elapsed = this.#now - (this.#start ?? this.#now);
    const deficit = this.budget * elapsed - this.#paid;
    const ratio = this.#ratio.ratio() * this.demand();
    const steady = this.budget / ratio;
    const correction = deficit / (deficit > 0 ? catchUpSeconds : paybackSeconds) / ratio;
    return Math.min(maxFactor * steady, Math.max(minFactor * steady, steady + correction));
  }
}
