/**
 * The budget's hard limit on the node group, whatever the plan asks for: the GPUs boa may pay for
 * next so that the paid time-average over the budget window stays within the budget. Two rules, the
 * lower wins:
 *
 * 1. The spread: what the window will have paid one horizon from now (its last T - horizon hours so
 *    far, plus these GPUs held for the horizon) stays within budget x (that window + slack x horizon):
 *      ceiling = budget x (1 + slack) - debt / horizon, debt = paid so far - budget x window so far.
 *    With an empty history that is the budget plus `slack` (10%: BOA's widths make spend fluctuate
 *    around the budget, and a hard ceiling at the mean would hold the average below it); spending below
 *    the budget earns room for bursts, debt lowers the ceiling until it is repaid within one horizon.
 *    Counting the last T hours instead would let the hour about to leave the window lend its credit:
 *    the heaviest 24 hours of a bursty run were measured 2.2-3.2% over that way (docs/budget.md).
 * 2. The sliding window: once the window is full, every window that ends within the horizon (checked
 *    at SLIDING_CHECKS points) stays within budget x (T + slack x horizon) if these GPUs are held
 *    until it ends. The spread alone bounds only the window ending one horizon out: a tick that
 *    follows it to its limit can overfill the windows that end sooner (a greedy spender at 1-minute
 *    ticks measured 3-8% over in 24 hours; with both rules, slack x horizon / T: 0.4% over 24 h).
 *    A full window can then pay at most what leaves it.
 *
 *    The windows checked reach past the horizon, to the look-ahead (`lookaheadHours`, 3 h; there,
 *    LOOKAHEAD_CHECKS_PER_HORIZON a horizon). Room saved in a lull and spent in the burst after it
 *    comes back 24 hours later: when the lull leaves the window, the burst's spend is still in it, and
 *    a full window must pay back all of it at once. Seen from 3 hours ahead, the same payback is spread
 *    over 3 hours instead of one: on bursty-960-1 at 1.6x its minimum the cluster fell to 36 GPUs of a
 *    budget of 119 with 24 jobs waiting or running; with the look-ahead, to 76 (docs/budget-log.md, "the
 *    echo").
 */

export interface SpendCeilingOptions {
  readonly horizonHours: number;
  /** Fraction above the budget the ceiling allows with no debt. */
  readonly slack: number;
  /**
   * Windows ending up to this many hours ahead are checked (at least the horizon, below the window):
   * a payback the window will need is spread over this long.
   */
  readonly lookaheadHours: number;
}

/**
 * The service's defaults (budgetHorizonHours, budgetSlack, budgetLookaheadHours); the simulator's boa
 * runs the same.
 */
export const DEFAULT_SPEND_CEILING: SpendCeilingOptions = { horizonHours: 1, slack: 0.1, lookaheadHours: 3 };

/**
 * The look-ahead when none is set: three horizons (3 hours at the default one), within the window's
 * last horizon and never below one horizon.
 */
export function defaultLookaheadHours(horizonHours: number, windowHours: number): number {
  return Math.max(horizonHours, Math.min(3 * horizonHours, windowHours - horizonHours));
}

/** Window ends checked past the horizon, per horizon: one every 6 minutes at the default 1-hour one. */
export const LOOKAHEAD_CHECKS_PER_HORIZON = 10;

/** Window ends checked within the horizon: one a minute at the default 1-hour horizon and 60 s ticks. */
export const SLIDING_CHECKS = 60;

/**
 * How many hours back the spread rule counts what was paid: the budget window as it will be when the
 * GPUs allowed now have been held for the horizon.
 */
export function ceilingLookbackHours(windowHours: number, horizonHours: number): number {
  return Math.max(0, windowHours - horizonHours);
}

/**
 * The look-backs, in hours, whose paid GPU-hours spendCeiling asks for: the spread rule's first, then
 * one for each window end within the horizon and the look-ahead once the window is that full.
 */
export function ceilingLookbacks(
  windowHours: number,
  horizonHours: number,
  elapsedHours: number,
  lookaheadHours = horizonHours,
): number[] {
  const elapsed = Math.max(0, elapsedHours);
  const lookbacks = [Math.min(ceilingLookbackHours(windowHours, horizonHours), elapsed)];
  const check = (ahead: number) => {
    const back = windowHours - ahead;
    if (back >= 0 && back <= elapsed) lookbacks.push(back);
  };
  for (let k = 1; k < SLIDING_CHECKS; k++) check((horizonHours * k) / SLIDING_CHECKS);
  const step = horizonHours / LOOKAHEAD_CHECKS_PER_HORIZON;
  const beyond = Math.floor((lookaheadHours - horizonHours) / step + 1e-9);
  for (let k = 1; k <= beyond; k++) check(horizonHours + k * step);
  return lookbacks;
}

/**
 * The look-backs of the windows a budget change is inside, that end past the look-ahead: each change's
 * own (the window that starts there), and those starting between the earliest change and the
 * look-ahead's reach, one every LOOKAHEAD_CHECKS_PER_HORIZON of a horizon. Such a window holds what was
 * spent before the change (at the budget then, room it saved spent in a burst included) and promises
 * the budget now for the rest: after a cut it can be full already. Checked only from the look-ahead, two
 * 400-GPU hours at 80 and a cut to 20 let 32 GPUs run ten hours later, and one 24 hours paid 864
 * GPU-hours against 660 promised (found by a property test, 2026-12-01). None reaches back past
 * `elapsedHours`, as in ceilingLookbacks: nothing was promised before it, and on a young ledger such
 * look-backs (up to 200 with a change a minute) each cost the store a query over every node (bench:soak).
 */
export function changeLookbacks(
  changedHoursAgo: readonly number[],
  windowHours: number,
  horizonHours: number,
  lookaheadHours: number,
  elapsedHours: number,
): number[] {
  const changes = changedHoursAgo.filter((back) => back >= 0 && back < windowHours);
  if (changes.length === 0) return [];
  const earliest = Math.min(...changes);
  const reach = windowHours - lookaheadHours;
  const step = horizonHours / LOOKAHEAD_CHECKS_PER_HORIZON;
  const backs = new Set(changes);
  for (let k = 1; reach - k * step >= earliest - 1e-9; k++)
    if (reach - k * step <= elapsedHours) backs.add(reach - k * step);
  return [...backs];
}

export interface SpendCeilingInput extends SpendCeilingOptions {
  readonly budgetGpuHoursPerHour: number;
  /** The budget window, hours (24 in the service). */
  readonly windowHours: number;
  /** Hours since the window may start: since the service started or the budget was set. */
  readonly elapsedHours: number;
  /** GPU-hours paid in the last `hours`, asked for each of ceilingLookbacks(). */
  readonly paidInLast: (hours: number) => number;
  /**
   * GPU-hours the budget promised over the last `hours` (the budgets in force then, a changed one
   * included); default: the budget throughout. The time to come is promised at the budget now.
   */
  readonly allowedInLast?: (hours: number) => number;
  /**
   * Hours back to when the budget changed, within the window: the windows that hold the change are
   * checked too, to their ends (changeLookbacks; paidInLast is asked for each). Room a higher budget
   * promised leaves the window with its hours, while what it was spent on stays in, so a later window
   * must not find more paid than it promises.
   */
  readonly changedHoursAgo?: readonly number[];
  readonly gpusPerNode: number;
  /** Nodes the group holds now (for the half-node hysteresis that keeps it from flapping). */
  readonly heldNodes?: number;
}

export interface SpendCeiling {
  /** Paid GPUs allowed from now on. */
  readonly gpus: number;
  /** Whole nodes within that (the node group's target never goes above). */
  readonly nodes: number;
  /**
   * GPU-hours paid above the budget in the window the spread rule counts (its last T - horizon
   * hours, or since it started; negative: below it, room to spend).
   */
  readonly debtGpuHours: number;
  /** GPU-hours the budget promised over those hours. */
  readonly promisedGpuHours: number;
  /** The hours that debt is counted over. */
  readonly debtHours: number;
  /**
   * GPU-hours of room plans may count on (the credit, the plan cap's relaxing): the spread rule's
   * (-debtGpuHours), but no more than any window that starts at a budget change has. Room an earlier,
   * higher budget left is never paid out after a change (those windows hold the ceiling), so plans that
   * counted it were wider than the ceiling allowed for a day (found in a trial: 100000 set for 25 s by
   * mistake, then 8, planned with 170).
   */
  readonly spendableGpuHours: number;
}

export function spendCeiling(input: SpendCeilingInput): SpendCeiling {
  const { budgetGpuHoursPerHour: budget, horizonHours, windowHours, slack } = input;
  const [lookback = 0, ...backs] = ceilingLookbacks(
    windowHours,
    horizonHours,
    input.elapsedHours,
    input.lookaheadHours,
  );
  const allowed = input.allowedInLast ?? ((hours: number) => budget * hours);
  const paid = input.paidInLast(lookback);
  let gpus = (allowed(lookback) + budget * (1 + slack) * horizonHours - paid) / horizonHours;
  const changes = changeLookbacks(
    input.changedHoursAgo ?? [],
    windowHours,
    horizonHours,
    input.lookaheadHours,
    input.elapsedHours,
  );
  // A window ending `ahead` hours from now, these GPUs held to its end: what was promised over its past
  // part, the budget for the rest.
  const heldToEnd = (back: number, ahead: number) =>
    (allowed(back) + budget * (ahead + slack * horizonHours) - input.paidInLast(back)) / ahead;
  for (const back of backs) gpus = Math.min(gpus, heldToEnd(back, windowHours - back));
  for (const back of changes) {
    const ahead = windowHours - back;
    if (ahead <= input.lookaheadHours + 1e-9) gpus = Math.min(gpus, heldToEnd(back, ahead));
    else {
      // Past the look-ahead, room the window has is spent as the spread rule spends its own, within one
      // horizon (the budget after that), and debt is repaid by its end. Held to its end, every change
      // took the slack away for a day: raising 40 to 41 on a fresh service cut the ceiling from 44 GPUs
      // to 41.2 (found by a newcomer). Debt repaid within one horizon instead stopped every job for ten
      // hours after a raise that followed a burst (found in review). A window with room keeps at least
      // the budget for its hours left, so it is still held to its end once the look-ahead reaches it.
      const room = allowed(back) - input.paidInLast(back) + budget * slack * horizonHours;
      gpus = Math.min(gpus, budget + room / (room >= 0 ? horizonHours : ahead));
    }
  }
  gpus = Math.max(0, gpus);
  // A hair of tolerance: a ceiling of exactly 40 GPUs is 10 nodes of 4, not 9.
  let nodes = Math.floor(gpus / input.gpusPerNode + 1e-9);
  // A node already held is kept while the ceiling is within half a node of it: at a ceiling just under
  // a node boundary the group would otherwise flap by one node every tick. Debt then stays below
  // (slack x budget + half a node) x horizon.
  const held = input.heldNodes ?? 0;
  if (held > nodes && gpus >= (held - 0.5) * input.gpusPerNode) nodes = held;
  const promisedGpuHours = allowed(lookback);
  let spendableGpuHours = promisedGpuHours - paid;
  for (const back of (input.changedHoursAgo ?? []).filter((b) => b >= 0 && b < windowHours)) {
    spendableGpuHours = Math.min(spendableGpuHours, allowed(back) - input.paidInLast(back));
  }
  return {
    gpus,
    nodes,
    debtGpuHours: paid - promisedGpuHours,
    promisedGpuHours,
    debtHours: lookback,
    spendableGpuHours,
  };
}
