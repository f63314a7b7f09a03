/**
 * A budget changed mid-window holds every window to what was promised over it (allowedInLast: each
 * value for the hours it was in force), so a change forgives no debt: a spender that takes all the
 * ceiling allows every minute pays at most, in any 24 hours, what was promised over them plus the
 * slack, and plus what a cut took back from the hours the ceiling had already counted on (the cut's
 * size over the look-ahead). What a window paid before its last change was judged against the budget
 * then and cannot be taken back: after that change the ceiling owes only to add no more than the slack.
 * Starting the window again at each change, as boa did until 2026-11-30, paid a cut after a burst 26%
 * over both budgets.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changeLookbacks, spendCeiling } from '../../src/core/spend-ceiling.ts';

const WINDOW = 24;
const HORIZON = 1;
const LOOKAHEAD = 3;
const SLACK = 0.1;
const PER_HOUR = 60;
const TICK = 1 / PER_HOUR;
/** Runs of the property: 100 each CI run (PROPERTY_RUNS=N for more; the timeout grows with it). */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

/** Minute by minute: the budget in force and the GPUs a spender that takes all it may is paid. */
function greedyRun(wanted: readonly number[], budgets: readonly number[]) {
  const minutes = wanted.length * PER_HOUR;
  const paidPrefix = [0];
  const promisedPrefix = [0];
  const paid: number[] = [];
  // The hours at which the budget changed.
  const changes = budgets.flatMap((budget, h) => (h > 0 && budget !== budgets[h - 1] ? [h] : []));
  for (let i = 0; i < minutes; i++) {
    const budget = budgets[Math.floor(i / PER_HOUR)] as number;
    const back = (hours: number, prefix: number[]) =>
      (prefix[i] as number) - (prefix[Math.max(0, i - Math.round(hours / TICK))] as number);
    const ceiling = spendCeiling({
      budgetGpuHoursPerHour: budget,
      windowHours: WINDOW,
      horizonHours: HORIZON,
      slack: SLACK,
      lookaheadHours: LOOKAHEAD,
      elapsedHours: i * TICK,
      paidInLast: (hours) => back(hours, paidPrefix),
      allowedInLast: (hours) => back(hours, promisedPrefix),
      changedHoursAgo: changes.filter((h) => h * PER_HOUR <= i).map((h) => i * TICK - h),
      gpusPerNode: 1,
    });
    const gpus = Math.min(wanted[Math.floor(i / PER_HOUR)] as number, ceiling.gpus);
    paid.push(gpus);
    paidPrefix.push((paidPrefix[i] as number) + gpus * TICK);
    promisedPrefix.push((promisedPrefix[i] as number) + budget * TICK);
  }
  return {
    paid,
    promised: (from: number, to: number) => (promisedPrefix[to] as number) - (promisedPrefix[from] as number),
  };
}

type Schedule = ReadonlyArray<{ hours: number; budget: number }>;

/** The most any 24 hours of a greedy run paid above what was promised over them, the slack and a cut over the look-ahead. */
function worstExcess(changes: Schedule, wanted: readonly number[]): number {
  const budgets: number[] = [];
  for (const { hours, budget } of changes) for (let h = 0; h < hours; h++) budgets.push(budget);
  while (budgets.length < wanted.length) budgets.push(budgets.at(-1) as number);
  const { paid, promised } = greedyRun(wanted, budgets);
  const span = WINDOW * PER_HOUR;
  const changeMinutes = budgets.flatMap((budget, h) =>
    h > 0 && budget !== budgets[h - 1] ? [h * PER_HOUR] : [],
  );
  const paidPrefix = [0];
  for (const gpus of paid) paidPrefix.push((paidPrefix.at(-1) as number) + gpus * TICK);
  const paidBetween = (from: number, to: number) => (paidPrefix[to] as number) - (paidPrefix[from] as number);
  let sum = 0;
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < paid.length; i++) {
    sum += (paid[i] as number) * TICK;
    if (i >= span) sum -= (paid[i - span] as number) * TICK;
    const from = Math.max(0, i + 1 - span);
    const inWindow = budgets.slice(Math.floor(from / PER_HOUR), Math.floor(i / PER_HOUR) + 1);
    const most = Math.max(...inWindow);
    const cut = most - Math.min(...inWindow);
    const bound = promised(from, i + 1) + SLACK * HORIZON * most + cut * LOOKAHEAD;
    // What was paid before the window's last change was judged against the budget then; no ceiling
    // can take it back, so after a cut the most it owes is to add no more than the slack.
    const lastChange = changeMinutes.filter((m) => m > from && m <= i).at(-1);
    const beforeChange = lastChange === undefined ? 0 : paidBetween(from, lastChange);
    // Give one GPU for one step: the run buys whole GPUs a minute at a time (a random seed found a
    // constant budget of 20 paying 0.0013 GPU-hours over, at the window's first full day).
    worst = Math.max(worst, sum - Math.max(bound, beforeChange + SLACK * HORIZON * most) - TICK);
  }
  return worst;
}

describe('the spend ceiling across budget changes', () => {
  it(
    'pays no 24 hours more than was promised over them, the slack and a cut over the look-ahead',
    () => {
      const schedule = fc.array(
        fc.record({ hours: fc.integer({ min: 1, max: 20 }), budget: fc.constantFrom(20, 39, 40, 80) }),
        {
          minLength: 2,
          maxLength: 5,
        },
      );
      const demand = fc.array(fc.constantFrom(0, 0, 30, 60, 400), { minLength: 60, maxLength: 60 });
      fc.assert(
        fc.property(schedule, demand, (changes, wanted) => {
          expect(worstExcess(changes, wanted)).toBeLessThanOrEqual(0);
        }),
        // A random seed each run (fast-check prints it on failure; PROPERTY_RUNS=N runs more): over 9,000
        // runs passed on 2026-12-01, and 3,000 after a change window past the look-ahead was spread.
        { numRuns: RUNS },
      );
    },
    1_200 * RUNS,
  );

  // Found in review (2026-12-01): with a window's debt repaid within one horizon, a raise from 40 to 41
  // two hours after a burst that spent saved room paid nothing for ten hours (every job stopped).
  it("a raise after a burst keeps paying: the burst's debt is repaid by its windows' ends", () => {
    const wanted = Array.from({ length: 40 }, (_, h) => (h < 12 ? 0 : h < 14 ? 400 : 60));
    const budgets = Array.from({ length: 40 }, (_, h) => (h < 16 ? 40 : 41));
    const { paid } = greedyRun(wanted, budgets);
    const hourPaid = (h: number) =>
      paid.slice(h * PER_HOUR, (h + 1) * PER_HOUR).reduce((a, b) => a + b, 0) * TICK;
    for (let h = 16; h < 26; h++) expect(hourPaid(h)).toBeGreaterThan(10);
  });

  // Found by this property on a random seed in CI (2026-12-01), before the ceiling checked every
  // window a change is inside: two 400-GPU hours at budget 80 borrow the room 18 quiet hours saved; after
  // a cut to 20, 32 GPUs ran for two hours ten hours later, and hours 18 to 42 paid 864 GPU-hours against
  // 660 promised, 16 above the bound.
  it('a cut after a burst lets no later window pay above the bound (the counterexample found)', () => {
    const changes = [
      { hours: 21, budget: 80 },
      { hours: 1, budget: 20 },
    ];
    const wanted = Array.from({ length: 60 }, (_, h) =>
      h === 18 || h === 20 || h === 31 ? 400 : h === 30 ? 60 : 0,
    );
    expect(worstExcess(changes, wanted)).toBeLessThanOrEqual(0);
  });

  // Found on a random seed in CI (2026-12-01), when the bound did not allow for it: two 400-GPU hours at
  // 80 just before a cut to 20 pay the 24 hours from the burst 800 against 600 promised. No ceiling can
  // take back what was spent before the cut was made; what it owes is to add nothing after it until
  // the burst's windows have passed, however much is wanted.
  it('after a burst spent just before a cut, nothing more is paid until its windows have passed', () => {
    const wanted = Array.from({ length: 60 }, (_, h) => (h === 15 || h === 16 ? 400 : h > 16 ? 30 : 0));
    const budgets = Array.from({ length: 60 }, (_, h) => (h < 17 ? 80 : 20));
    const { paid } = greedyRun(wanted, budgets);
    const paidHours = (from: number, to: number) =>
      paid.slice(from * PER_HOUR, to * PER_HOUR).reduce((a, b) => a + b, 0) * TICK;
    expect(paidHours(15, 17)).toBeGreaterThan(600);
    expect(paidHours(17, 39)).toBe(0);
    expect(paidHours(41, 60)).toBeGreaterThan(0);
    expect(
      worstExcess(
        [
          { hours: 17, budget: 80 },
          { hours: 1, budget: 20 },
        ],
        wanted,
      ),
    ).toBeLessThanOrEqual(0);
  });

  it('after a burst, a cut to 39 pays the next hours less than before it, not 26% over', () => {
    // 12 idle hours, a burst, idle to hour 28, then all it may; the budget cut from 40 to 39 at hour 30.
    const wanted = Array.from({ length: 60 }, (_, h) => (h < 12 ? 0 : h < 14 ? 400 : h < 28 ? 0 : 400));
    const budgets = Array.from({ length: 60 }, (_, h) => (h < 30 ? 40 : 39));
    const { paid } = greedyRun(wanted, budgets);
    const hourPaid = (h: number) =>
      paid.slice(h * PER_HOUR, (h + 1) * PER_HOUR).reduce((a, b) => a + b, 0) * TICK;
    const kept = greedyRun(
      wanted,
      budgets.map(() => 40),
    ).paid;
    const keptHour = kept.slice(30 * PER_HOUR, 31 * PER_HOUR).reduce((a, b) => a + b, 0) * TICK;
    expect(hourPaid(30)).toBeLessThanOrEqual(keptHour + 1e-9);
  });

  it('counts for plans no room a higher budget left before a cut', () => {
    // 80 until 2 hours ago, 40 since, paid 30 GPUs throughout, 10 hours in: the spread rule's window
    // was promised 720 and paid 300, but the window that starts at the cut has 80 - 60 = 20 left, and
    // the ceiling holds that window to it.
    const ceiling = spendCeiling({
      budgetGpuHoursPerHour: 40,
      windowHours: WINDOW,
      horizonHours: HORIZON,
      slack: SLACK,
      lookaheadHours: LOOKAHEAD,
      elapsedHours: 10,
      paidInLast: (hours) => 30 * hours,
      allowedInLast: (hours) => 40 * Math.min(hours, 2) + 80 * Math.max(0, hours - 2),
      changedHoursAgo: [2],
      gpusPerNode: 1,
    });
    expect(ceiling.debtGpuHours).toBeCloseTo(300 - 720, 9);
    expect(ceiling.spendableGpuHours).toBeCloseTo(20, 9);
  });

  it('asks for no window that starts before the history it reads', () => {
    // Two hours in, a change half an hour ago: the windows from it to the look-ahead's reach (21 h back)
    // start before anything was promised; on a young ledger each was a query over every node (bench:soak).
    const young = changeLookbacks([0.5], 24, 1, 3, 2);
    expect(young).toContain(0.5);
    expect(Math.max(...young)).toBeLessThanOrEqual(2);
    expect(young.length).toBeGreaterThan(10);
    // A full history: every window from the change to the reach, one every 6 minutes.
    const full = changeLookbacks([0.5], 24, 1, 3, 30);
    expect(full.length).toBeGreaterThan(200);
    expect(Math.max(...full)).toBeCloseTo(20.9, 9);
  });
});
