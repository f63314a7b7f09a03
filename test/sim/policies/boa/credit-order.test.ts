/**
 * The simulator's boa plans with the service's budget: its control's budget and the load's minimum
 * handed to core/planning-budget.ts as service/plan-inputs.ts hands them, then the calculator's floor.
 * Found in review: the two differed under a backlog needing more than the budget, with budget unspent
 * in the window (the simulator's credit multiplied the minimum, the service's the budget below it).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CREDIT, creditFactor } from '../../../../src/core/credit.ts';
import { DEFAULT_PLAN_CAP } from '../../../../src/core/plan-cap.ts';
import { planningBudget } from '../../../../src/core/planning-budget.ts';
import { boaSettings } from '../../../../src/sim/policies/boa/index.ts';
import { BoaPolicy } from '../../../../src/sim/policies/boa/policy.ts';
import type { ClusterView, JobView } from '../../../../src/sim/policy.ts';
import { clusterView, jobView } from '../fakes.ts';
import { boaContext } from './context.ts';

const waiting = (id: number, app: string, arrival: number): JobView => jobView(id, { app, arrival });

describe("boa's planning budget under a backlog, with budget unspent", () => {
  it('is the service’s: the credit widens the minimum, in the one rule of core/planning-budget.ts', () => {
    const budget = 8;
    const context = boaContext({});
    const policy = new BoaPolicy(context, boaSettings(context, { budget }));
    // No node ever comes up: nothing is paid, so the window's budget is all unspent.
    const cluster = (now: number): ClusterView => clusterView([], { now, mode: 'autoscaled', maxNodes: 500 });
    const jobs: JobView[] = [waiting(0, 'cifar10', 0)];
    policy.onArrival(jobs[0]!, 0);
    for (let t = 0; t <= 3 * 3600; t += 60) policy.decide(cluster(t), jobs);
    // A burst of 40 jobs of a heavy class: the load now needs more than the budget.
    const burst = 3 * 3600 + 1;
    for (let i = 1; i <= 40; i++) {
      const job = waiting(i, 'deepspeech2', burst);
      jobs.push(job);
      policy.onArrival(job, burst);
    }
    const now = 3 * 3600 + 60;
    policy.decide(cluster(now), jobs);
    const planned = policy.planned!;
    const minimum = planned.minFeasibleBudget;
    expect(minimum).toBeGreaterThan(budget);
    const service = planningBudget(
      {
        budget,
        controlBudget: budget / policy.paidRatio,
        warmupFactor: 1,
        loadNeeds: minimum,
        unspentGpuHours: budget * (now / 3600),
      },
      { credit: DEFAULT_CREDIT, planCap: DEFAULT_PLAN_CAP },
    );
    // The scenario must exercise a credit, which widens the minimum: the case the two differed on.
    const unspentGpuHours = budget * (now / 3600);
    expect(creditFactor({ budget, loadNeeds: minimum, unspentGpuHours }, DEFAULT_CREDIT)).toBeGreaterThan(
      1.2,
    );
    expect(planned.plannedBudget).toBeCloseTo(Math.max(minimum, service.planned), 6);
    expect(planned.plannedBudget).toBeGreaterThan(minimum * 1.2);
  });
});
