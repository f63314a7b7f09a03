/**
 * Credit for a tight budget: when the load needs most of the budget, the plan also spends what the
 * window has left unspent, spread over `spendHours`.
 *
 * Why: a plan at the budget for a load that needs nearly all of it puts every job on its cheapest
 * widths, and the budget that quieter hours left unspent reaches the jobs only through the spend
 * ceiling, as room for peaks, while jobs wait behind it. On the generated bursty trace at 1.2x its
 * minimum that left 7% of the budget unspent while the jobs present could have used 8% more at half a
 * GPU's speedup per GPU or better (docs/budget-log.md). A generous budget (the load needs less than
 * `loadShare` of it) keeps its credit for the bursts to come: spending it then widens jobs where GPUs
 * buy little, measured worse (docs/comparison.md, "what was tried").
 *
 * The credit is phased in over the `RAMP_SHARE` of the budget below `loadShare`, not switched on at it:
 * after quiet hours the whole credit can double the plan's budget, and a load hovering at the gate then
 * flipped plans between the cheapest widths and twice the budget from one re-plan to the next, every job
 * restarting each time (workload-1 at 0.9x its minimum: 12 -> 129 -> 4 nodes within 8 minutes).
 */
export interface CreditOptions {
  /** Hours over which the window's unspent budget is spent; 0: never. */
  readonly spendHours: number;
  /**
   * The credit is spent whole while the load needs at least this share of the budget, and a part of it
   * from `RAMP_SHARE` below.
   */
  readonly loadShare: number;
}

/** The setting measured (docs/budget-log.md, "credit for a tight budget"). */
export const DEFAULT_CREDIT: CreditOptions = { spendHours: 4, loadShare: 0.9 };

/** The share of the budget below `loadShare` over which the credit grows from none to all of it. */
export const RAMP_SHARE = 0.2;

export interface CreditInput {
  /** The budget's GPU-hours per hour. */
  readonly budget: number;
  /** The minimum feasible budget of the load the plan is made for (its cheapest widths). */
  readonly loadNeeds: number;
  /** GPU-hours the window has left unspent so far (budget x hours so far - paid); negative: debt. */
  readonly unspentGpuHours: number;
}

/**
 * What the plan's budget is multiplied by: 1 + the credit's share of the budget per hour, times how far
 * the load is into the ramp below `loadShare` (all of it from `loadShare` up); 1 without credit.
 */
export function creditFactor(input: CreditInput, options: CreditOptions): number {
  const { budget, loadNeeds, unspentGpuHours } = input;
  if (!(options.spendHours > 0) || !(budget > 0) || !(unspentGpuHours > 0)) return 1;
  const phasedIn = (loadNeeds / budget - (options.loadShare - RAMP_SHARE)) / RAMP_SHARE;
  if (!(phasedIn > 0)) return 1;
  return 1 + (Math.min(1, phasedIn) * unspentGpuHours) / options.spendHours / budget;
}

/** Checks options from a config or a command line; the message names the setting. */
export function creditOptions(spendHours: number, loadShare: number): CreditOptions {
  if (!(Number.isFinite(spendHours) && spendHours >= 0)) {
    throw new RangeError(`credit spend hours must be a number >= 0 (0: never), got ${spendHours}`);
  }
  if (!(Number.isFinite(loadShare) && loadShare > 0)) {
    throw new RangeError(`credit load share must be a number > 0, got ${loadShare}`);
  }
  return { spendHours, loadShare };
}
