/**
 * When a registration compares the load with the plan's (rates-check.ts): each one up to 1,000 active
 * jobs, one in every active/1,000 past that, and the tick compares what registrations came since. A
 * comparison reads every submission of the window and every active job: after each registration, a
 * burst of 20,000 took 104 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RatesCheck, registrationsPerComparison } from '../../src/service/rates-check.ts';
import { startService } from './harness.ts';

describe('RatesCheck', () => {
  it('compares after every registration up to 1,000 active jobs, one in every active/1,000 past it', () => {
    let compared = 0;
    const check = new RatesCheck(() => (compared += 1));
    for (let i = 0; i < 10; i++) check.afterRegistration(1000);
    expect(compared).toBe(10);
    for (let i = 0; i < 10; i++) check.afterRegistration(5000);
    expect(compared).toBe(12);
    expect(registrationsPerComparison(0)).toBe(1);
    expect(registrationsPerComparison(1001)).toBe(2);
    expect(registrationsPerComparison(20_000)).toBe(20);
  });

  it('the tick compares only when a registration came since the last comparison', () => {
    let compared = 0;
    const check = new RatesCheck(() => (compared += 1));
    check.atTick();
    expect(compared).toBe(0);
    check.afterRegistration(3000);
    expect(compared).toBe(0);
    check.atTick();
    expect(compared).toBe(1);
    check.atTick();
    expect(compared).toBe(1);
  });
});

describe('the service re-plans for a moved load', () => {
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  const serviceWith = async (cifar10Jobs: number) => {
    // bert arrives rarely: one bert job moves its load far past a quarter.
    const s = await startService({ config: { priorRates: { cifar10: 8, bert: 0.01 } } });
    closers.push(() => s.close());
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 100 })).status).toBe(200);
    for (let i = 0; i < cifar10Jobs; i++) s.service.registerJob('cifar10', `c-${i}`);
    await s.ticks(1);
    const planId = () => s.service.state.plan?.row.id;
    const bertRate = () =>
      (s.service.state.plan?.row.inputs as { ratesPerHour: Record<string, number> }).ratesPerHour.bert;
    return { s, planId, bertRate };
  };

  it('at once after a registration with few jobs active', async () => {
    const { s, planId, bertRate } = await serviceWith(10);
    const before = { id: planId(), bert: bertRate() as number };
    s.service.registerJob('bert', 'b');
    await s.service.planner.idle();
    expect(planId()).not.toBe(before.id);
    expect(bertRate()).toBeGreaterThan(1.25 * before.bert);
  });

  it('at the next tick after a registration past 1,000 active jobs that did not compare', async () => {
    const { s, planId, bertRate } = await serviceWith(1500);
    const before = { id: planId(), bert: bertRate() as number };
    // 1,501 active: one registration in two compares, and the tick compared the last ones.
    s.service.registerJob('bert', 'b');
    await s.service.planner.idle();
    expect(planId()).toBe(before.id);
    await s.ticks(1);
    expect(planId()).not.toBe(before.id);
    expect(bertRate()).toBeGreaterThan(1.25 * before.bert);
  }, 60_000);
});
