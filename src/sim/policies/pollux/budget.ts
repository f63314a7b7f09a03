/**
 * pollux-budget: pollux-autoscale holding a time-average budget, as a Pollux user would: a feedback
 * controller moves the autoscaler's efficiency target c. Spending above what the budget allows raises c
 * (fewer, busier nodes), spending below lowers it. What it aims at each tick is the budget plus the
 * deficit so far (budget x elapsed - paid) caught up over `catchUpSeconds`, the same kind of correction
 * boa's budget control makes. The controller integrates the error on logit(c), so c stays in (0, 1)
 * and moves in relative terms near its ends.
 */
import type { ClusterView } from '../../policy.ts';
import { PaidRatioEstimator } from '../boa/paid-ratio.ts';

export interface PolluxBudgetOptions {
  readonly initialTarget: number;
  /** Change of logit(c) per hour at a spend error of one budget. */
  readonly gainPerHour: number;
  readonly catchUpSeconds: number;
  readonly minTarget: number;
  readonly maxTarget: number;
  readonly releaseLagSeconds: number;
}

export const DEFAULT_POLLUX_BUDGET: PolluxBudgetOptions = {
  initialTarget: 0.5,
  gainPerHour: 4,
  catchUpSeconds: 2 * 3600,
  minTarget: 0.02,
  maxTarget: 0.98,
  releaseLagSeconds: 30,
};

const logit = (c: number) => Math.log(c / (1 - c));
const sigmoid = (u: number) => 1 / (1 + Math.exp(-u));

export class TargetController {
  readonly #paidTracker: PaidRatioEstimator;
  #u: number;
  #paid = 0;
  #start: number | undefined;
  #last: number | undefined;

  constructor(
    readonly budget: number,
    readonly options: PolluxBudgetOptions = DEFAULT_POLLUX_BUDGET,
  ) {
    this.#u = logit(options.initialTarget);
    // Only its paid booking is used (nodes present through the interval, release lag for gone ones).
    this.#paidTracker = new PaidRatioEstimator({
      priorRatio: 1,
      priorGpus: 0,
      priorSeconds: 0,
      halfLifeSeconds: Number.POSITIVE_INFINITY,
      releaseLagSeconds: options.releaseLagSeconds,
    });
  }

  get target(): number {
    return sigmoid(this.#u);
  }

  /** Books the interval since the last tick and moves c; returns the target for this tick. */
  update(cluster: ClusterView): number {
    const now = cluster.now;
    this.#start ??= now;
    this.#paid += this.#paidTracker.observe(now, new Map(cluster.nodes.map((n) => [n.id, n.gpus])), 0);
    const dt = this.#last === undefined ? 0 : now - this.#last;
    this.#last = now;
    const deficit = this.budget * (now - this.#start) - this.#paid;
    const wanted = this.budget + deficit / this.options.catchUpSeconds;
    const spending = cluster.nodes.reduce((sum, n) => sum + n.gpus, 0);
    this.#u += (this.options.gainPerHour * (spending - wanted) * dt) / (this.budget * 3600);
    const { minTarget, maxTarget } = this.options;
    this.#u = Math.min(logit(maxTarget), Math.max(logit(minTarget), this.#u));
    return this.target;
  }
}
