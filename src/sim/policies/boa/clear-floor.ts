/**
 * The simulator-only variant `boa@clearH` (docs/comparison.md, "what was tried"): when the spend ceiling
 * binds, narrowing by price reveals the price the load needs, its clearing price (core/narrowing.ts
 * clearingPrice); each re-plan plans at a price (BOA's multiplier) at least the highest clearing price
 * seen, halved every `halfLifeHours`, instead of the plan's own when that is lower. Apart from the
 * policy: one idea, off by default, measured and not in the service.
 */
import { clearingPrice, type NarrowedJobs } from '../../../core/narrowing.ts';
import type { BoaPlanner, PlannedWidths } from './planner.ts';

export interface PriceLogEntry {
  readonly at: number;
  readonly rates: Readonly<Record<string, number>>;
  readonly budget: number;
  /** The plan's own price. */
  readonly target: number;
  readonly floor: number;
  /** The price planned at. */
  readonly mu: number;
}

export class ClearingFloor {
  /** The highest clearing price seen, as of `at` (seconds). */
  #seen: { mu: number; at: number } | undefined;
  /** Each plan's time, planning budget, own price, the floor, and the price planned at. */
  readonly priceLog: PriceLogEntry[] = [];

  constructor(
    readonly halfLifeHours: number,
    readonly planner: BoaPlanner,
  ) {}

  /** The floor at `now`: the highest clearing price seen, halved every halfLifeHours. */
  at(now: number): number {
    const seen = this.#seen;
    if (seen === undefined) return 0;
    return seen.mu * 0.5 ** ((now - seen.at) / 3600 / this.halfLifeHours);
  }

  /** A tick's jobs under a ceiling of `gpus`: its clearing price (if it binds) raises the floor. */
  observe(now: number, jobs: NarrowedJobs, gpus: number): void {
    const price = clearingPrice(jobs, gpus);
    if (price === null || !(price > this.at(now))) return;
    this.#seen = { mu: price, at: now };
  }

  /**
   * The plan at the floor when the plan's own price is below it, its plannedBudget the planning
   * budget's (so the re-plan test and the anti-windup read the control's budget as before); undefined:
   * the plan itself.
   */
  floored(
    now: number,
    rates: Readonly<Record<string, number>>,
    exact: PlannedWidths,
  ): PlannedWidths | undefined {
    const target = this.planner.priceAt(rates, exact.plannedBudget);
    const floor = this.at(now);
    const mu = Math.max(target, floor);
    this.priceLog.push({ at: now, rates, budget: exact.plannedBudget, target, floor, mu });
    if (!(floor > target)) return undefined;
    return { ...this.planner.atMultiplier(rates, mu), plannedBudget: exact.plannedBudget };
  }
}
