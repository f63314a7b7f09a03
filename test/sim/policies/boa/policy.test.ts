import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import type { ClusterView, JobView, PolicyContext } from '../../../../src/sim/policy.ts';
import { BOA_DEFAULTS, boaPolicy, boaSettings } from '../../../../src/sim/policies/boa/index.ts';
import { BoaPlanner } from '../../../../src/sim/policies/boa/planner.ts';
import { BoaPolicy } from '../../../../src/sim/policies/boa/policy.ts';
import { REPO } from '../../../helpers/run-script.ts';
import { DEFAULT_RISE } from '../../../../src/service/rate-rise.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const context = (rates: Record<string, number>): PolicyContext => ({
  profiles,
  gpusPerNode: 4,
  tickSeconds: 60,
  rescaleSeconds: 30,
  oracle: { goodput: () => 0 },
  traceRatesPerHour: rates,
  seed: 1,
});
const RATES = { cifar10: 8, bert: 1 };
const minimum = new BoaPlanner(profiles, 'exact', 1).minFeasible(RATES);

describe('boa options', () => {
  it('needs a positive budget, a known solver and rate source', () => {
    expect(() => boaSettings(context(RATES), {})).toThrow(/boa needs a budget/);
    expect(() => boaSettings(context(RATES), { budget: -1 })).toThrow(/boa needs a budget/);
    const solver = 'fast' as 'exact';
    expect(() => boaSettings(context(RATES), { budget: 50, solver })).toThrow(
      /solver must be exact or paper, got "fast"/,
    );
    const rates = 'trace' as 'oracle';
    expect(() => boaSettings(context(RATES), { budget: 50, rates })).toThrow(
      /rates must be online, prior \(online from the trace's rates\) or oracle \(the trace's rates\), got "trace"/,
    );
  });

  it("takes prior rates from elsewhere than the trace as its online estimator's prior, checked", () => {
    const prior = { cifar10: 6, bert: 2 };
    expect(boaSettings(context(RATES), { budget: 50, priorRatesPerHour: prior }).onlineRates).toMatchObject({
      priorRatesPerHour: prior,
    });
    expect(boaSettings(context(RATES), { budget: 50 }).onlineRates.priorRatesPerHour).toEqual({});
    expect(() =>
      boaSettings(context(RATES), { budget: 50, rates: 'oracle', priorRatesPerHour: prior }),
    ).toThrow(/priorRatesPerHour needs online rates/);
    expect(() => boaSettings(context(RATES), { budget: 50, priorRatesPerHour: { cifar10: -1 } })).toThrow(
      /priorRatesPerHour.cifar10 must be a number >= 0/,
    );
  });

  it('with oracle rates, refuses a budget below the minimum feasible one at the trace rates, stating it', () => {
    expect(() => boaSettings(context(RATES), { budget: minimum * 0.9, rates: 'oracle' })).toThrow(
      new RegExp(`below the minimum feasible budget ${minimum.toPrecision(6)}`),
    );
    expect(boaSettings(context(RATES), { budget: minimum, rates: 'oracle' }).solver).toBe('exact');
    // Online rates are the default, and then the minimum is not known up front: no check.
    expect(boaSettings(context(RATES), { budget: 1 }).rates).toBe('online');
  });
});

describe('the planner', () => {
  it('plans at the minimum feasible budget when asked for less, and spends the budget otherwise', () => {
    const planner = new BoaPlanner(profiles, 'exact', 1);
    const low = planner.plan(RATES, minimum / 2);
    expect(low.plannedBudget).toBeCloseTo(minimum, 9);
    expect(low.gpuHoursPerHour).toBeCloseTo(minimum, 9);
    const mid = planner.plan(RATES, 2 * minimum);
    expect(mid.gpuHoursPerHour).toBeCloseTo(2 * minimum, 6);
    const paper = new BoaPlanner(profiles, 'paper', 1).plan(RATES, 2 * minimum);
    expect(paper.gpuHoursPerHour).toBeLessThanOrEqual(2 * minimum * (1 + 1e-9));
    expect(mid.avgJctSeconds).toBeLessThanOrEqual(paper.avgJctSeconds * (1 + 1e-9));
  });
});

describe('executing the plan on an uncontended cluster', () => {
  const cluster: ClusterView = {
    now: 0,
    gpusPerNode: 4,
    mode: 'autoscaled',
    maxNodes: 100,
    nodes: Array.from({ length: 30 }, (_, id) => ({ id, gpus: 4, ready: true, readyAt: 0 })),
  };
  const view = (statEpoch: number, allocation: readonly number[] = []): JobView => ({
    id: 7,
    name: 'cifar10-7',
    app: 'cifar10',
    arrival: 0,
    requestedGpus: 1,
    requestedBatch: 128,
    progressFraction: (statEpoch + 0.5) / 8,
    statEpoch,
    allocation,
    rescales: 0,
    restartingUntil: null,
    attainedGpuSeconds: 0,
    runSeconds: 0,
  });

  it("gives a job its plan's width at each statistical epoch, on as few nodes as possible", () => {
    // The plan alone: the spend ceiling (tested below) would hold a lone wide job to 1.1 x the budget,
    // and the plan cap (below) the plan to twice its load's minimum.
    const settings = boaSettings(context(RATES), {
      budget: 2 * minimum,
      solver: 'paper',
      planCapMultiple: 0,
    });
    const policy = new BoaPolicy(context(RATES), { ...settings, ceiling: null });
    policy.onArrival?.(view(0), 0);
    let allocation: readonly number[] = [];
    for (let epoch = 0; epoch < 8; epoch++) {
      const decision = policy.decide({ ...cluster, now: 60 * epoch }, [view(epoch, allocation)]);
      // The paper's plans have one share; the budget control may have re-planned at this tick.
      const width = policy.planned?.plan.cifar10?.[0]?.widths[epoch] as number;
      allocation = decision.allocations.get(7) ?? [];
      expect(allocation).toHaveLength(width);
      expect(new Set(allocation).size).toBe(Math.ceil(width / 4));
      expect(decision.desiredNodes).toBe(Math.ceil(width / 4));
    }
  });

  it('with debt (idle nodes paid for above the budget), the ceiling holds the job back, as the service does', () => {
    const budget = 2 * minimum;
    const policy = boaPolicy.create(context(RATES), { budget, solver: 'paper' }) as BoaPolicy;
    policy.onArrival?.(view(0), 0);
    const first = policy.decide(cluster, [view(0)]);
    expect(first.allocations.get(7)?.length).toBeGreaterThan(0);
    // Half an hour of 30 nodes (120 GPUs) against a budget of about 23: the debt is far more than one
    // horizon of budget, so the ceiling is 0 until it is repaid.
    expect(120 * 0.5 - budget * 0.5).toBeGreaterThan(budget * 1.1);
    const later = policy.decide({ ...cluster, now: 1800 }, [view(0)]);
    expect(later.allocations.get(7) ?? []).toHaveLength(0);
    expect(later.desiredNodes).toBe(0);
  });

  /** Each policy's planned budget at `now` on a cluster with no nodes (one job, arriving at 0). */
  const plannedBudgets = (policies: readonly BoaPolicy[]) => (now: number) =>
    policies.map((policy) => {
      if (now === 0) policy.onArrival?.(view(0), 0);
      policy.decide({ ...cluster, nodes: [], now }, [view(0)]);
      return policy.planned?.plannedBudget as number;
    });

  it('with a warm-up, plans with half the budget at the first arrival and all of it once it is over', () => {
    const budget = 3 * minimum;
    // Without the plan cap (below), which would hold both plans to twice the minimum.
    const options = { budget, rates: 'oracle', solver: 'paper', planCapMultiple: 0 } as const;
    const plain = boaPolicy.create(context(RATES), options) as BoaPolicy;
    const warm = boaPolicy.create(context(RATES), { ...options, warmupHours: 8 }) as BoaPolicy;
    const budgets = plannedBudgets([plain, warm]);
    const [start, startWarm] = budgets(0);
    expect(start).toBeCloseTo(budget, 6);
    expect(startWarm).toBeCloseTo(budget / 2, 6);
    const [, midWarm] = budgets(4 * 3600);
    expect(midWarm).toBeCloseTo(budget * 0.75, 6);
    const [end, endWarm] = budgets(8 * 3600);
    expect(endWarm).toBeCloseTo(end as number, 6);
    expect(() => boaSettings(context(RATES), { budget, warmupHours: -1 })).toThrow(
      /warmupHours must be a number >= 0 \(0: no warm-up\), got -1/,
    );
  });

  it('by default (planCapMultiple 2) caps the plan at twice the minimum, raised as the budget goes unspent', () => {
    const budget = 4 * minimum;
    const options = { budget, rates: 'oracle', solver: 'paper' } as const;
    const capped = boaPolicy.create(context(RATES), options) as BoaPolicy;
    const plain = boaPolicy.create(context(RATES), { ...options, planCapMultiple: 0 }) as BoaPolicy;
    // No nodes, so nothing is paid: every hour leaves an hour of budget unspent.
    const budgets = plannedBudgets([capped, plain]);
    const [start, startPlain] = budgets(0);
    expect(start).toBeCloseTo(2 * minimum, 6);
    expect(startPlain).toBeCloseTo(budget, 6);
    // Two hours of budget unspent, half of relaxHours (4): the cap is 1.5 times as high.
    const [later] = budgets(2 * 3600);
    expect(later).toBeCloseTo(3 * minimum, 2);
    expect(boaSettings(context(RATES), { budget, planCapMultiple: 0 }).planCap).toBeNull();
    expect(boaSettings(context(RATES), { budget }).planCap).toEqual({
      multiple: 2,
      relaxHours: 4,
    });
    expect(() => boaSettings(context(RATES), { budget, planCapMultiple: 0.5 })).toThrow(
      /planCapMultiple: plan cap multiple must be 0 \(no cap\) or a number >= 1, got 0.5/,
    );
  });

  it("spends the window's credit over 4 hours while the load needs 90% of the budget, never with creditSpendHours 0", () => {
    const budget = 1.05 * minimum;
    const options = { budget, rates: 'oracle', solver: 'paper' } as const;
    const tight = boaPolicy.create(context(RATES), options) as BoaPolicy;
    const off = boaPolicy.create(context(RATES), { ...options, creditSpendHours: 0 }) as BoaPolicy;
    const generous = boaPolicy.create(context(RATES), { ...options, budget: 2 * minimum }) as BoaPolicy;
    // No nodes, so nothing is paid: every hour leaves an hour of budget unspent.
    const budgets = plannedBudgets([tight, off, generous]);
    const [start, startOff] = budgets(0);
    expect(start).toBeCloseTo(budget, 6);
    expect(startOff).toBeCloseTo(budget, 6);
    // Two hours of budget unspent, spent over 4 hours: half the budget more, for the tight budget only.
    const [later, laterOff, laterGenerous] = budgets(2 * 3600);
    expect(later).toBeCloseTo(1.5 * budget, 2);
    expect(laterOff).toBeCloseTo(budget, 6);
    expect(laterGenerous).toBeCloseTo(2 * minimum, 6);
    expect(() => boaSettings(context(RATES), { budget, creditSpendHours: -1 })).toThrow(
      /creditSpendHours: credit spend hours must be a number >= 0 \(0: never\), got -1/,
    );
  });

  it("plans online rates at the service's confidence bound with rateConfidence, the estimate by default", () => {
    expect(boaSettings(context(RATES), { budget: 50 }).onlineRates.confidence).toBe(0);
    expect(boaSettings(context(RATES), { budget: 50, rateConfidence: 2 }).onlineRates).toEqual({
      ...BOA_DEFAULTS.onlineRates,
      confidence: 2,
    });
    for (const rateConfidence of [-0.5, 4.5, Number.NaN]) {
      expect(() => boaSettings(context(RATES), { budget: 50, rateConfidence })).toThrow(
        /boa rateConfidence must be a number from 0 \(the estimate\) to 4 standard errors/,
      );
    }
  });

  it('plans first-day arrivals with firstDayArrivals, none by default', () => {
    expect(boaSettings(context(RATES), { budget: 50 }).onlineRates.firstDayArrivals).toBe(0);
    expect(boaSettings(context(RATES), { budget: 50, firstDayArrivals: 2 }).onlineRates).toEqual({
      ...BOA_DEFAULTS.onlineRates,
      firstDayArrivals: 2,
    });
    for (const firstDayArrivals of [-1, 10.5, Number.NaN]) {
      expect(() => boaSettings(context(RATES), { budget: 50, firstDayArrivals })).toThrow(
        /boa firstDayArrivals must be a number from 0 \(none\) to 10 arrivals a class/,
      );
    }
  });

  it('detects rises as the service does by default, over other hours with rateRiseHours, never with 0', () => {
    expect(boaSettings(context(RATES), { budget: 50 }).onlineRates.rise).toEqual(DEFAULT_RISE);
    expect(boaSettings(context(RATES), { budget: 50, rateRiseHours: 4 }).onlineRates.rise).toMatchObject({
      hours: 4,
      holdHalfLifeHours: 4,
    });
    expect(boaSettings(context(RATES), { budget: 50, rateRiseHours: 0 }).onlineRates.rise).toBeNull();
    for (const rateRiseHours of [-1, 24, Number.NaN]) {
      expect(() => boaSettings(context(RATES), { budget: 50, rateRiseHours })).toThrow(
        /boa rateRiseHours must be a number from 0 \(no rise detection\) to below the rate window's 24 hours/,
      );
    }
  });

  it('drains after 2 hours without an arrival by default, never with drainAfterHours 0, and refuses less', () => {
    expect(boaSettings(context(RATES), { budget: 50 }).drain?.afterHours).toBe(2);
    expect(boaSettings(context(RATES), { budget: 50, drainAfterHours: 0.5 }).drain?.afterHours).toBe(0.5);
    expect(boaSettings(context(RATES), { budget: 50, drainAfterHours: 0 }).drain).toBeNull();
    expect(() => boaSettings(context(RATES), { budget: 50, drainAfterHours: -1 })).toThrow(
      /drainAfterHours must be a number >= 0 \(0: never\), got -1/,
    );
  });

  it('queues jobs for the budget least work left first unless asked otherwise, and refuses another order', () => {
    expect(boaSettings(context(RATES), { budget: 50 }).queueOrder).toBe('least-work-left');
    expect(boaSettings(context(RATES), { budget: 50, queueOrder: 'submitted' }).queueOrder).toBe('submitted');
    expect(() => boaSettings(context(RATES), { budget: 50, queueOrder: 'shortest' })).toThrow(
      /boa queueOrder must be one of least-work-left, submitted, got "shortest"/,
    );
    expect(boaSettings(context(RATES), { budget: 50 }).queueOverdueHours).toBe(24);
    expect(() => boaSettings(context(RATES), { budget: 50, queueOverdueHours: 0 })).toThrow(
      /boa queueOverdueHours must be a number of hours > 0, got 0/,
    );
  });

  it('fills below the band only when asked (fillBelowBand), from 6 hours of window, and refuses a band of 1 or more', () => {
    expect(boaSettings(context(RATES), { budget: 50 }).bandFill).toBeNull();
    expect(boaSettings(context(RATES), { budget: 50, fillBelowBand: 0 }).bandFill).toBeNull();
    expect(boaSettings(context(RATES), { budget: 50, fillBelowBand: 0.015 }).bandFill).toEqual({
      band: 0.015,
      afterHours: 6,
    });
    expect(() => boaSettings(context(RATES), { budget: 50, fillBelowBand: 1 })).toThrow(
      /boa fillBelowBand: the band must be a share of the budget from 0 \(never\) to below 1, got 1/,
    );
  });

  it('a backlog on a plan at its minimum does not wind the demand ratio up (anti-windup)', () => {
    // Below the minimum the plan is the cheapest one; forty jobs present allocate far more than its
    // steady state expects. Narrowing cannot answer that, so it must not count as demand: counted, the
    // ratio climbed and kept later plans narrow after the backlog had cleared.
    const settings = boaSettings(context(RATES), {
      budget: minimum,
      rates: 'oracle',
      demandHalfLifeHours: 2,
    });
    const policy = new BoaPolicy(context(RATES), { ...settings, budget: minimum / 2, ceiling: null });
    const jobs = Array.from({ length: 40 }, (_, i) => ({ ...view(0), id: i, name: `cifar10-${i}` }));
    for (const job of jobs) policy.onArrival?.(job, 0);
    let held: ReadonlyMap<number, readonly number[]> = new Map();
    for (let tick = 0; tick <= 120; tick++) {
      const views = jobs.map((job) => ({ ...job, allocation: held.get(job.id) ?? [] }));
      held = policy.decide({ ...cluster, now: 60 * tick }, views).allocations;
    }
    expect(policy.planned?.plannedBudget).toBeCloseTo(minimum, 6);
    const allocated = [...held.values()].reduce((sum, a) => sum + a.length, 0);
    expect(allocated).toBeGreaterThan(2 * minimum);
    expect(policy.demandRatio).toBe(1);
  });
});
