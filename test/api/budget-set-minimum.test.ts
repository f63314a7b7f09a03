/**
 * `PUT /v1/budget`, `GET /v1/plan` and `boa budget set` name the load's minimum as a budget (paid), the figure the
 * budget and its warning are compared with, as `boa frontier` does, the GPUs it gives the jobs beside it.
 * Found trying boa as a newcomer: "minimum feasible 11.32" (allocated) above "budget 5 is below 22.629"
 * (paid), where `boa frontier` said "22.64 GPU-hours/hour paid (11.32 allocated to jobs)".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderBudgetSet } from '../../src/cli/commands/budget.ts';
import { captureLogs } from '../cloud/fake-time.ts';
import { GatedQueries } from '../service/gated-computer.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** A budget set's answer, as PUT /v1/budget gives it, with this minimum allocated and paid. */
const answer = (allocated: number, paid: number) =>
  ({
    gpuHoursPerHour: 5,
    dollarsPerMonth: null,
    minFeasibleBudget: allocated,
    minFeasiblePaidBudget: paid,
    warning: null,
    plan: {
      id: 3,
      predictedGpuHoursPerHour: allocated,
      predictedAvgJctSeconds: 900,
      ratesPerHour: { bert: 2 },
    },
  }) as unknown as Parameters<typeof renderBudgetSet>[0];

describe('the minimum a budget set names', () => {
  it('is paid, with what it allocates to jobs beside it where the two differ', () => {
    expect(renderBudgetSet(answer(11.32, 22.64))).toMatch(
      /^minimum feasible\s+22\.64 GPU-hours\/hour paid \(11\.32 allocated to jobs\) at these arrival rates$/m,
    );
    expect(renderBudgetSet(answer(11.32, 11.32))).toMatch(
      /^minimum feasible\s+11\.32 GPU-hours\/hour at these arrival rates$/m,
    );
  });

  it("is the frontier's paid minimum in the API's answer", async () => {
    const s = await startService({ config: { priorRates: { cifar10: 8 } } });
    cleanups.push(s.close);
    const set = (await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 5 })).body;
    const frontier = (await s.request('GET', '/v1/frontier')).body;
    expect(set.minFeasiblePaidBudget).toBeGreaterThan(5);
    expect(set.minFeasiblePaidBudget).toBeCloseTo(frontier.minFeasiblePaidBudget, 3);
    expect(set.warning).toMatch(/^budget 5 is below [\d.]+ GPU-hours\/hour, the minimum/);
    // GET /v1/plan names it too (boa plan named only the allocated one).
    const plan = (await s.request('GET', '/v1/plan')).body;
    expect(plan.minFeasiblePaidBudget).toBeCloseTo(set.minFeasiblePaidBudget, 3);
  });

  it('is the one the log names, while the load needs kept from before the plan are stale', async () => {
    // The queries' worker is held when jobs arrive, so the load needs kept from before stand while the
    // plan for the new budget computes the current minimum. The answer words its warning from the plan's
    // figure; the log said the one from before it (found in review: "below 8.138" logged, 8.392 answered).
    const queries = new GatedQueries();
    const logs = captureLogs();
    const s = await startService({ queries, logger: logs.logger, config: { priorRates: { cifar10: 8 } } });
    cleanups.push(async () => {
      for (const held of queries.heldQueries.splice(0)) held.go();
      await s.close();
    });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    for (let i = 0; i < 6; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    const set = (await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 5 })).body;
    expect(set.warning).toMatch(/^budget 5 is below [\d.]+ GPU-hours\/hour/);
    const logged = logs.lines.filter((l) => /budget 5 is below/.test(JSON.stringify(l)));
    expect(logged.map((l) => [l.event, l.warning])).toEqual([['budget_warning', set.warning]]);
  });
});
