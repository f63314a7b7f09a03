/**
 * Holding the paid time-average at the budget. Two parts:
 * - feed-forward: the plan allocates GPU-time but the bill counts node time, so plan with
 *   budget / (paid / allocated), the ratio estimated online (paid-ratio.ts);
 * - feedback on the run's own average: a run starts empty, has lulls and bursts, and ends draining, so
 *   the plan's steady-state spend alone falls short over a finite run. The deficit so far
 *   (budget x elapsed - paid) is caught up over `catchUpSeconds`; a surplus is paid back over the
 *   longer `paybackSeconds`, since narrowing the jobs of a burst costs more JCT than widening the few
 *   jobs of a lull gains (an asymmetric integral controller).
 * The planning budget stays within [minFactor, maxFactor] x budget / ratio, and at least the minimum
 * feasible budget.
 */
import { PaidRatioEstimator, type PaidRatioOptions } from './paid-ratio.ts';

export interface BudgetControlOptions {
  readonly catchUpSeconds: number;
  readonly paybackSeconds: number;
  readonly minFactor: number;
  readonly maxFactor: number;
  readonly paidRatio: Omit<PaidRatioOptions, 'priorGpus'>;
}

export const DEFAULT_BUDGET_CONTROL: BudgetControlOptions = {
  catchUpSeconds: 2 * 3600,
  paybackSeconds: 6 * 3600,
  minFactor: 0.7,
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
  #paid = 0;
  #start: number | undefined;
  #now = 0;

  constructor(
    readonly budget: number,
    readonly options: BudgetControlOptions = DEFAULT_BUDGET_CONTROL,
  ) {
    this.#ratio = new PaidRatioEstimator({ ...options.paidRatio, priorGpus: budget });
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
  observe(now: number, nodeGpus: ReadonlyMap<number, number>, allocatedGpuSeconds: number): void {
    this.#start ??= now;
    this.#now = now;
    this.#paid += this.#ratio.observe(now, nodeGpus, allocatedGpuSeconds);
  }

  /** The budget to plan with now. */
  planningBudget(minFeasible: number): number {
    const { catchUpSeconds, paybackSeconds, minFactor, maxFactor } = this.options;
    const elapsed = this.#now - (this.#start ?? this.#now);
    const deficit = this.budget * elapsed - this.#paid;
    const ratio = this.#ratio.ratio();
    const steady = this.budget / ratio;
    const correction = deficit / (deficit > 0 ? catchUpSeconds : paybackSeconds) / ratio;
    const wanted = Math.min(maxFactor * steady, Math.max(minFactor * steady, steady + correction));
    return Math.max(minFeasible, wanted);
  }
}
