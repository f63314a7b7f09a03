/**
 * Credit for a tight budget (core/credit.ts) in the service: while the load needs at least 90% of the
 * budget, plans also spend what the window left unspent, spread over 4 hours, and the budget's control
 * block says how much; a generous budget keeps its credit; `creditSpendHours: 0` turns it off.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** A service whose budget is `timesNeeds` times what its load needs; `at(hours)` re-plans that much later. */
async function budgeted(timesNeeds: number, config: Record<string, unknown> = {}) {
  // A prior worth many hours: two hours without a submission leave the estimated load where it is.
  const s = await startService({
    config: { priorRates: { cifar10: 8, bert: 1 }, priorWeightHours: 1000, ...config },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 400 })).status).toBe(200);
  const needs = (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour as number;
  expect(needs).toBeGreaterThan(0);
  const budget = needs * timesNeeds;
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget })).status).toBe(200);
  await s.service.planner.idle();
  const setAt = s.clock.t;
  return {
    budget,
    at: async (hours: number) => {
      s.clock.t = setAt + hours * 3_600_000;
      await s.service.planner.request('timer');
      const control = (await s.request('GET', '/v1/budget')).body.control;
      return {
        planningBudget: control.planningBudget as number,
        credit: control.creditGpuHoursPerHour as number,
        plan: (await s.request('GET', '/v1/plan')).body,
      };
    },
  };
}

describe('credit for a tight budget', () => {
  it('plans a tight budget with the unspent budget of the window spread over 4 hours', async () => {
    const { budget, at } = await budgeted(1.05);
    const start = await at(0);
    expect(start.credit).toBe(0);
    expect(start.planningBudget).toBeCloseTo(budget, 2);
    // Two hours with nothing paid: two hours of budget unspent, spent over 4 hours, is half the budget more.
    const later = await at(2);
    expect(later.credit).toBeCloseTo(budget / 2, 1);
    expect(later.planningBudget).toBeCloseTo(budget * 1.5, 1);
  });

  it('counts no room a budget before a change left, which the ceiling never pays out', async () => {
    // Found in a trial: 100000 set by mistake for a minute, then the budget meant. The window promised
    // 100000 for that minute; the ceiling holds the window from the change to the new budget, but the
    // credit counted the minute's room and planned for hundreds of GPU-hours per hour more.
    const s = await startService({
      config: { priorRates: { cifar10: 8, bert: 1 }, priorWeightHours: 1000 },
    });
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 400 })).status).toBe(200);
    const needs = (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour as number;
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 100_000 })).status).toBe(200);
    s.clock.t += 60_000;
    const budget = needs * 1.05;
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget })).status).toBe(200);
    await s.service.planner.idle();
    const setAt = s.clock.t;
    const control = async (hours: number) => {
      s.clock.t = setAt + hours * 3_600_000;
      await s.service.planner.request('timer');
      return (await s.request('GET', '/v1/budget')).body.control;
    };
    const now = await control(0);
    // The minute's room is the spread rule's, but not the ceiling's: it holds the new budget.
    expect(now.debtGpuHours).toBeLessThan(-1000);
    expect(now.ceilingGpus).toBeLessThanOrEqual(budget * 1.1 + 1e-6);
    expect(now.creditGpuHoursPerHour).toBe(0);
    expect(now.planningBudget).toBeCloseTo(budget, 2);
    // Room saved since the change is credit as before: two hours unspent, half the budget more.
    const later = await control(2);
    expect(later.creditGpuHoursPerHour).toBeCloseTo(budget / 2, 1);
    expect(later.planningBudget).toBeCloseTo(budget * 1.5, 1);
  });

  it('widens the cheapest plan of a load that needs more than the budget', async () => {
    // The load needs 1.25x the budget: the credit multiplies that minimum (the calculator's floor),
    // not the budget below it. Until 2026-12-04 the service planned budget x 1.5 = 1.2x the minimum,
    // where the simulator, measured better at matched paid spend, planned the minimum x 1.5.
    const { budget, at } = await budgeted(0.8);
    const needs = budget / 0.8;
    const later = await at(2);
    expect(later.credit).toBeCloseTo(needs / 2, 1);
    expect(later.planningBudget).toBeCloseTo(needs * 1.5, 1);
  });

  it('says the plan is the cheapest, jobs waiting for the budget, where the credit cannot pay for it', async () => {
    // Found trying boa as a newcomer: a budget of 40 against a minimum of 126.6, with a little credit,
    // planned the minimum x 1.01; the plan said nothing of a queue, and the dashboard nothing of why it
    // allocated three times the budget. Half the minimum, one hour unspent: the credit is a quarter more.
    const { budget, at } = await budgeted(0.5);
    const needs = budget / 0.5;
    const later = await at(1);
    expect(later.credit).toBeGreaterThan(0);
    expect(later.planningBudget).toBeGreaterThan(needs);
    expect(later.plan.inputs.clampedToMinimum).toBe(true);
    // A credit that pays for the minimum (0.8 of it, two hours unspent: x 1.5) queues nothing.
    const paid = await (await budgeted(0.8)).at(2);
    expect(paid.plan.inputs.clampedToMinimum).toBe(false);
  });

  it('keeps the credit of a generous budget for later', async () => {
    const { budget, at } = await budgeted(2);
    const later = await at(2);
    expect(later.credit).toBe(0);
    expect(later.planningBudget).toBeCloseTo(budget, 2);
  });

  it('is off with creditSpendHours 0, and a negative value is refused, naming the setting', async () => {
    const { budget, at } = await budgeted(1.05, { creditSpendHours: 0 });
    const later = await at(2);
    expect(later.credit).toBe(0);
    expect(later.planningBudget).toBeCloseTo(budget, 2);
    await expect(startService({ config: { creditSpendHours: -1 } })).rejects.toThrow(
      /creditSpendHours must be >= 0 \(0: never\)/,
    );
  });
});
