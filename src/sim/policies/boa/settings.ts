/** What a run of the simulator's boa is set with (index.ts boaSettings checks and fills it). */
import type { QueueOrder } from '../../../core/ceiling-widths.ts';
import type { CreditOptions } from '../../../core/credit.ts';
import type { BandFillOptions } from '../../../core/exec/band-fill.ts';
import type { DrainOptions } from '../../../core/exec/drain-widths.ts';
import type { FillOptions } from '../../../core/exec/idle-fill.ts';
import type { PlanCapOptions } from '../../../core/plan-cap.ts';
import type { SpendCeilingOptions } from '../../../core/spend-ceiling.ts';
import type { WarmupOptions } from '../../../core/warmup.ts';
import type { BudgetControlOptions } from './budget-control.ts';
import type { OnlineRateOptions } from './online-rates.ts';

export interface BoaSettings {
  /** Target paid GPU-hours per hour (time-average). */
  readonly budget: number;
  readonly solver: 'exact' | 'paper';
  /** online: estimated from arrivals; prior: the same, from the trace's rates as a prior; oracle: the trace's. */
  readonly rates: 'online' | 'prior' | 'oracle';
  /** Online rates: re-plan this often (the service's calculator timer, calculatorMinutes). */
  readonly replanSeconds: number;
  /** Re-plan when the corrected budget moves by more than this fraction since the last plan... */
  readonly replanThreshold: number;
  /** ...but not more often than this (a new class's first job is planned at once). */
  readonly minReplanSeconds: number;
  readonly onlineRates: OnlineRateOptions;
  /** Boot nodes this long before a job's predicted grow (the node group's boot time plus one tick). */
  readonly provisionLeadSeconds: number;
  readonly control: BudgetControlOptions;
  /** A job changes width mid-epoch only when the plan's width for it moved by this factor or more. */
  readonly relockFactor: number;
  /** Widen jobs onto idle GPUs of the nodes they occupy (idle-fill.ts); null: never. */
  readonly fill: FillOptions | null;
  /**
   * The fill once no job has arrived for the drain's hours (QUIET_FILL, as the service's
   * `quietFillSavedRestarts`); null: `fill` then too. Never while the drain is off.
   */
  readonly quietFill: FillOptions | null;
  /** The service's hard limit on paid GPUs from the window's spend so far (spend-ceiling.ts); null: none. */
  readonly ceiling: SpendCeilingOptions | null;
  /**
   * The service's budget window: the spend ceiling counts what was paid in it, and the plan serves the
   * jobs waiting now as if they arrived evenly over it, on top of the rate estimate (loadRates), so a
   * backlog moves the plan to cheaper widths.
   */
  readonly budgetWindowHours: number;
  /** The service's opt-in warm-up (core/warmup.ts), from the first arrival; null: none. */
  readonly warmup: WarmupOptions | null;
  /** Spend the budget on the running jobs once submissions stop (drain-widths.ts); null: never. */
  readonly drain: DrainOptions | null;
  /** Spend toward the budget while the window is under it by more than a band (band-fill.ts); null: never. */
  readonly bandFill: BandFillOptions | null;
  /** The service's cap on the plan's budget relative to its load (core/plan-cap.ts); null: none. */
  readonly planCap: PlanCapOptions | null;
  /** The service's spending of the window's credit while the load is tight (core/credit.ts); null: never. */
  readonly credit: CreditOptions | null;
  /**
   * boa-price (price.ts): plan at this price per GPU-second instead of a budget, once, reading no rates;
   * no budget control, ceiling or drain. null: boa.
   */
  readonly price: number | null;
  /**
   * Simulator-only variant (`boa@clearH`): when the spend ceiling binds, narrowing by price reveals the
   * price the load needs, its clearing price (core/narrowing.ts clearingPrice); each re-plan plans at
   * a price (BOA's multiplier) at least the highest clearing price seen, decayed with this half-life in
   * hours, instead of the plan's own when that is lower; the ceiling and every other rule unchanged.
   * null: off.
   */
  readonly clearHalfLifeHours: number | null;
  /** The order jobs waiting for the budget start in (the service's queueOrder). */
  readonly queueOrder: QueueOrder;
  /** Hours after its submission a waiting job goes first (the service's queueOverdueHours). */
  readonly queueOverdueHours: number;
}
