import { describe, expect, it } from 'vitest';
import { boaSettings } from '../../../../src/sim/policies/boa/index.ts';
import { BoaPlanner } from '../../../../src/sim/policies/boa/planner.ts';
import { BoaPolicy } from '../../../../src/sim/policies/boa/policy.ts';
import { boaContext } from './context.ts';
import { clusterView, jobView, nodes } from '../fakes.ts';

const context = boaContext({ bert: 4 });

describe('boa@clearH: the plan priced at least at the ceiling’s clearing price', () => {
  it('checks the half-life', () => {
    for (const hours of [0, -1, Number.NaN])
      expect(() => boaSettings(context, { budget: 50, clearHalfLifeHours: hours })).toThrow(
        /clearHalfLifeHours must be a number > 0/,
      );
    expect(boaSettings(context, { budget: 50 }).clearHalfLifeHours).toBeNull();
  });

  it('plans at the floor once the ceiling has bound, and the floor decays', () => {
    const policy = new BoaPolicy(context, boaSettings(context, { budget: 12, clearHalfLifeHours: 4 }));
    const jobs = Array.from({ length: 12 }, (_, i) => jobView(i + 1, { app: 'bert' }));
    for (const job of jobs) policy.onArrival(job, 0);
    const cluster = (now: number) => clusterView(nodes(16), { now, mode: 'autoscaled', maxNodes: 16 });
    const planner = new BoaPlanner(context.profiles, 'exact', 1);
    let floored = 0;
    let narrower = 0;
    for (let now = 60; now <= 4 * 3600; now += 60) {
      const plans = policy.priceLog.length;
      policy.decide(cluster(now), jobs);
      const entry = policy.priceLog[plans];
      if (entry === undefined) continue;
      // Never below the plan's own price; at the floor when that is higher.
      expect(entry.mu).toBe(Math.max(entry.target, entry.floor));
      if (!(entry.floor > entry.target)) continue;
      floored++;
      expect(policy.planned?.plan).toEqual(planner.atMultiplier(entry.rates, entry.floor).plan);
      // A dearer price than the budget's: no more GPU-hours an hour than the planning budget buys
      // (the same when both are the cheapest widths), fewer at the second plan (below).
      const own = planner.plan(entry.rates, entry.budget).gpuHoursPerHour;
      expect(policy.planned?.gpuHoursPerHour).toBeLessThanOrEqual(own);
      if ((policy.planned?.gpuHoursPerHour as number) < own) narrower++;
      expect(policy.planned?.plannedBudget).toBe(entry.budget);
    }
    expect(floored).toBeGreaterThan(3);
    expect(narrower).toBeGreaterThan(0);
    const [first, second] = policy.priceLog;
    // No ceiling bound before the first plan: its own price; the ceiling binds at once for 12 bert jobs.
    expect(first?.floor).toBe(0);
    expect(second?.floor).toBeGreaterThan(second?.target as number);
    // With no dearer clearing since, the floor halves every 4 hours, until the plan's own price is above it.
    const later = policy.priceLog.slice(2);
    for (let i = 1; i < later.length; i++) {
      const was = later[i - 1];
      const is = later[i];
      if (was !== undefined && is !== undefined && is.floor < was.floor)
        expect(is.floor).toBeCloseTo(was.floor * 0.5 ** ((is.at - was.at) / 3600 / 4), 9);
    }
    const last = policy.priceLog.at(-1);
    expect(last?.floor).toBeLessThan(last?.target as number);
    expect(last?.mu).toBe(last?.target);
  });
});
