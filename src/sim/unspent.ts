/**
 * Where a budget went unspent in a simulated run: at every tick where the cluster paid for fewer GPUs
 * than the budget, the gap is split by what the jobs present could have used (core/below-budget.ts,
 * the split the service shows for the instant), each tick's state held until the next.
 */
import {
  type BelowBudget,
  belowBudget,
  DEFAULT_MIN_MARGINAL_SPEEDUP,
  usableExtraGpus,
} from '../core/below-budget.ts';
import { type ClassProfile, epochSpeedups } from '../core/profile.ts';
import type { TickSnapshot } from './engine/engine.ts';

/** GPU-hours over the run, each a share of the budget's GPU-hours. */
export interface UnspentSplit {
  /** The budget times the hours observed. */
  readonly budgetGpuHours: number;
  /** Below the budget, in all: waiting + usable + unusable. */
  readonly underGpuHours: number;
  readonly waitingGpuHours: number;
  readonly usableGpuHours: number;
  readonly unusableGpuHours: number;
  /** Above the budget (spent out of room saved earlier). */
  readonly overGpuHours: number;
}

/** Accumulates the split tick by tick: each snapshot's state holds until the next one. */
export class UnspentAccount {
  #last: { at: number; over: number; below: BelowBudget } | undefined;
  #budgetSeconds = 0;
  #under = { waiting: 0, usable: 0, unusable: 0 };
  #over = 0;

  constructor(
    readonly budget: number,
    readonly classes: ReadonlyMap<string, ClassProfile>,
    readonly minMarginalSpeedup = DEFAULT_MIN_MARGINAL_SPEEDUP,
  ) {}

  observe(tick: TickSnapshot): void {
    this.#close(tick.cluster.now);
    const paid = tick.cluster.nodes.reduce((sum, node) => sum + node.gpus, 0);
    let allocated = 0;
    let waiting = false;
    let usable = 0;
    for (const job of tick.jobs) {
      const width = tick.allocations.get(job.id)?.length ?? 0;
      allocated += width;
      if (width === 0) {
        waiting = true;
        continue;
      }
      const speedups = epochSpeedups(this.classes.get(job.app), job.statEpoch);
      if (speedups) usable += usableExtraGpus(speedups, width, this.minMarginalSpeedup);
    }
    this.record(
      tick.cluster.now,
      paid,
      belowBudget({
        budgetGpus: this.budget,
        paidGpus: paid,
        allocatedGpus: allocated,
        anyWaiting: waiting,
        usableGpus: usable,
      }),
    );
  }

  /** A split made elsewhere (the service's, `demo`), at `at` seconds, held until the next. */
  record(at: number, paidGpus: number, below: BelowBudget): void {
    this.#close(at);
    this.#last = { at, over: Math.max(0, paidGpus - this.budget), below };
  }

  /** The split up to `at` (seconds), the last tick's state held until then. */
  finish(at: number): UnspentSplit {
    this.#close(at);
    const hours = (seconds: number) => seconds / 3600;
    const { waiting, usable, unusable } = this.#under;
    return {
      budgetGpuHours: hours(this.#budgetSeconds * this.budget),
      underGpuHours: hours(waiting + usable + unusable),
      waitingGpuHours: hours(waiting),
      usableGpuHours: hours(usable),
      unusableGpuHours: hours(unusable),
      overGpuHours: hours(this.#over),
    };
  }

  #close(at: number): void {
    const last = this.#last;
    if (last === undefined || at <= last.at) return;
    const seconds = at - last.at;
    this.#budgetSeconds += seconds;
    this.#over += last.over * seconds;
    this.#under.waiting += last.below.waitingGpus * seconds;
    this.#under.usable += last.below.usableGpus * seconds;
    this.#under.unusable += last.below.unusableGpus * seconds;
    this.#last = { ...last, at };
  }
}
