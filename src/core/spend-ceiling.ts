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
import { narrowedByPrice, speedupAt } from './narrowing.ts';
import type { SpeedupTable } from './profile.ts';

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
 * GPU-hours against 660 promised (found by a property test, 2026-12-01).
 */
export function changeLookbacks(
  changedHoursAgo: readonly number[],
  windowHours: number,
  horizonHours: number,
  lookaheadHours: number,
): number[] {
  const changes = changedHoursAgo.filter((back) => back >= 0 && back < windowHours);
  if (changes.length === 0) return [];
  const earliest = Math.min(...changes);
  const reach = windowHours - lookaheadHours;
  const step = horizonHours / LOOKAHEAD_CHECKS_PER_HORIZON;
  const backs = new Set(changes);
  for (let k = 1; reach - k * step >= earliest - 1e-9; k++) backs.add(reach - k * step);
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
  return { gpus, nodes, debtGpuHours: paid - promisedGpuHours, promisedGpuHours, debtHours: lookback };
}

/**
 * The widths the ceiling lets run, on arrays aligned with the jobs (0: the job waits), in priority
 * order (running jobs keep their place, then the oldest waiting): each is served at its width if it
 * still fits, else it waits for the budget (smaller jobs behind it may start: backfill). A job wider
 * than the whole ceiling would never fit: it is served at the ceiling's width when that much is free,
 * so it cannot starve.
 */
function servedWidths(running: readonly boolean[], widths: readonly number[], gpus: number): number[] {
  const whole = Math.floor(gpus + 1e-9);
  const served = new Array<number>(widths.length).fill(0);
  let left = whole;
  const take = (index: number) => {
    const width = Math.min(widths[index] as number, whole);
    if (width > 0 && width <= left) {
      served[index] = width;
      left -= width;
    }
  };
  for (let i = 0; i < widths.length; i++) if (running[i]) take(i);
  for (let i = 0; i < widths.length; i++) if (!running[i]) take(i);
  return served;
}

/** The served jobs and their widths, running jobs first, then the rest, each in the jobs' order. */
function servedMap<J>(
  jobs: readonly J[],
  running: readonly boolean[],
  served: readonly number[],
): Map<J, number> {
  const map = new Map<J, number>();
  for (const first of [true, false]) {
    jobs.forEach((job, index) => {
      const width = served[index] as number;
      if (running[index] === first && width > 0) map.set(job, width);
    });
  }
  return map;
}

/**
 * A job waiting this long for the budget narrows widths running jobs keep (widthsUnderCeiling): the
 * service's keptWidthWaitMinutes unless set, and the simulator's boa.
 */
export const DEFAULT_LONG_WAIT_SECONDS = 3600;

/** A job as the ceiling sees it: running or not (its widths come from the caller). */
export interface CeilingJob {
  readonly state: string;
}

/**
 * The widths the ceiling allows, the same in the service and the simulator: when the planned widths
 * all fit, they are what jobs get; otherwise jobs are narrowed by price (narrowing.ts: the GPUs that buy
 * the least speed go first, by each job's speedup table for its statistical epoch), then served in
 * priority order (servedWidths), and a job left out waits. Every change of a running job's width is a
 * restart, so a running job keeps the width it has while that is within its plan and within twice its
 * narrowed width, unless it may now have at least twice as much: the ceiling moves with the window's
 * spend every tick, and narrowed jobs that moved with it restarted over and over (on bursty-960-1 at
 * 1.6x the minimum, when every job was narrowed to one common width: 3669 restarts against 1060 with
 * this rule, and 5% of average JCT). Kept widths give way at once where they would stop another running
 * job, and for a waiting job once it has waited long (`waitedLong`: an hour by default; keptWidthsGiveWay).
 * Not sooner for a waiting job: narrowing
 * them at once was faster in the simulator but with 1.4x-1.9x the restarts and the demo at 40 out of
 * issue 14's band; after an hour it changes nearly nothing there, while in `bench:tick` (a ceiling
 * that binds for good) 100 of 1,000 jobs waited up to 4 hours without it (docs/budget-log.md, "a long wait").
 */
export function widthsUnderCeiling<J extends CeilingJob>(
  jobs: readonly J[],
  plannedWidth: (job: J) => number,
  currentWidth: (job: J) => number,
  gpus: number,
  speedupOf: (job: J) => SpeedupTable | undefined,
  waitedLong: (job: J) => boolean = () => false,
  /** The job's class weight (narrowing.ts); 1 when not given. */
  weightOf?: (job: J) => number,
): Map<J, number> {
  const running = jobs.map((job) => job.state === 'running');
  const planned = jobs.map(plannedWidth);
  const whole = Math.floor(gpus + 1e-9);
  if (planned.reduce((sum, w) => sum + w, 0) <= whole) {
    return servedMap(jobs, running, servedWidths(running, planned, gpus));
  }
  const current = jobs.map((job, index) => (running[index] ? currentWidth(job) : 0));
  const tables = jobs.map(speedupOf);
  const weights = weightOf ? jobs.map(weightOf) : undefined;
  const served = ceilingWidths({ running, planned, current, tables, weights }, gpus, (index) =>
    waitedLong(jobs[index] as J),
  );
  return servedMap(jobs, running, served);
}

/**
 * widthsUnderCeiling on the jobs' columns (`current`: 0 for a job not running), the widths aligned
 * with them (0: the job waits): the service's tick reads its jobs once into columns, where a map of
 * 1,000 jobs built and read each tick cost as much as the narrowing (bench:tick).
 */
export function ceilingWidths(
  jobs: JobArrays,
  gpus: number,
  waitedLong: (index: number) => boolean,
): number[] {
  const { running, planned, current, tables } = jobs;
  const whole = Math.floor(gpus + 1e-9);
  let total = 0;
  for (const width of planned) total += width;
  if (total <= whole) return servedWidths(running, planned, gpus);
  const narrowed = narrowedByPrice({ planned, current, speedups: tables, weights: jobs.weights }, gpus);
  const widths = narrowed.map((target, index) => {
    const plan = planned[index] as number;
    const held = current[index] as number;
    const kept = held > 0 && held <= plan && held <= 2 * target && target < 2 * held;
    return kept ? held : target;
  });
  keptWidthsGiveWay(running, narrowed, widths, whole, waitedLong);
  fillRemainder(jobs, widths, gpus);
  return servedWidths(running, widths, gpus);
}

/**
 * Widths running jobs keep above their narrowed ones never stop another running job, nor keep a job
 * that has waited long for the budget (`waitedLong`) waiting: the youngest running job goes to its
 * narrowed width first, until the running jobs and the long-waiting ones fit. (Narrowing alone fits
 * them: a kept width that did not would leave a running job out, stopped, with GPUs unused.)
 */
function keptWidthsGiveWay(
  running: readonly boolean[],
  narrowed: readonly number[],
  widths: number[],
  whole: number,
  waitedLong: (index: number) => boolean,
): void {
  let needed = 0;
  for (let index = 0; index < widths.length; index++) {
    if (running[index]) needed += widths[index] as number;
    else if (waitedLong(index)) needed += narrowed[index] as number;
  }
  for (let index = widths.length - 1; index >= 0 && needed > whole; index--) {
    const width = widths[index] as number;
    const target = narrowed[index] as number;
    if (running[index] && width > target) {
      widths[index] = target;
      needed -= width - target;
    }
  }
}

/** The jobs as the ceiling reads them, as arrays aligned with them. */
export interface JobArrays {
  readonly running: readonly boolean[];
  readonly planned: readonly number[];
  readonly current: readonly number[];
  readonly tables: ReadonlyArray<SpeedupTable | undefined>;
  /** Each job's class weight (narrowing.ts); 1 for every job when not given. */
  readonly weights?: readonly number[] | undefined;
}

/**
 * Narrowing can leave part of the ceiling unused (a step down may free more than was needed, and
 * taking it back may not fit), and so can the widths running jobs keep. What is left goes, oldest
 * first, to waiting jobs (one GPU more each: no restart), then to running jobs that it can at least
 * double (a smaller gain is not worth a restart, as in the rule above); a width only where its table
 * says it is faster (cifar10's first epoch is slower on 5 GPUs than on 4).
 */
function fillRemainder(jobs: JobArrays, widths: number[], gpus: number): void {
  const { running, planned, current, tables } = jobs;
  const faster = (index: number, from: number, to: number) => {
    const table = tables[index];
    return table === undefined || speedupAt(table, to) > speedupAt(table, from);
  };
  let left = Math.floor(gpus + 1e-9);
  for (const width of widths) left -= width;
  for (let i = 0; i < widths.length && left > 0; i++) {
    const width = widths[i] as number;
    if (!running[i] && width > 0 && width < (planned[i] as number) && faster(i, width, width + 1)) {
      widths[i] = width + 1;
      left -= 1;
    }
  }
  for (let i = 0; i < widths.length && left > 0; i++) {
    const width = widths[i] as number;
    const held = current[i] as number;
    if (!running[i] || width !== held || held <= 0) continue;
    const doubled = atLeastDoubled(tables[i], held, Math.min(planned[i] as number, held + left));
    if (doubled !== undefined && faster(i, held, doubled)) {
      widths[i] = doubled;
      left -= doubled - width;
    }
  }
}

/**
 * The narrowest width of at least twice `held` and at most `most` that the job's table lists: an
 * unlisted one runs as fast as the listed width below it (found in review: bert held 9 was given 18,
 * which runs as 16 does, two GPUs paid for nothing). Without a table, twice `held`.
 */
function atLeastDoubled(table: SpeedupTable | undefined, held: number, most: number): number | undefined {
  if (table === undefined) return 2 * held <= most ? 2 * held : undefined;
  let best: number | undefined;
  for (const key of Object.keys(table)) {
    const width = Number(key);
    if (width >= 2 * held && width <= most && (best === undefined || width < best)) best = width;
  }
  return best;
}
