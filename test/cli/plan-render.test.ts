import { describe, expect, it } from 'vitest';
import { renderPlan } from '../../src/cli/commands/plan.ts';

/** A plan view as GET /v1/plan gives it, at these budgets. */
const view = (budget: number, planningBudget: number, clampedToMinimum = false) =>
  ({
    id: 7,
    computedAt: '2026-12-01T00:00:00.000Z',
    solver: 'exact',
    budget,
    planningBudget,
    minFeasibleBudget: 12.34567,
    predicted: { avgJctSeconds: 1800, gpuHoursPerHour: 21.5 },
    solveMs: 3,
    widths: { bert: [{ share: 1, widths: [2, 4] }] },
    inputs: { ratesPerHour: { bert: 2 }, clampedToMinimum },
  }) as unknown as Parameters<typeof renderPlan>[0];

describe("boa plan's budget line", () => {
  it('says the planning budget only when it prints differently from the budget', () => {
    // A hair off (the paid/allocated ratio at 1 within rounding) read "planned for 40 allocated to pay for 40".
    expect(renderPlan(view(40, 40.00000001))).toMatch(/^budget\s+40 GPU-hours\/hour$/m);
    expect(renderPlan(view(40, 36.5))).toMatch(
      /^budget\s+40 GPU-hours\/hour \(planned for 36\.5 allocated to pay for 40\)$/m,
    );
  });

  it('says the plan cap, not the paid/allocated correction, when the cap held the planning budget down', () => {
    // GET /v1/plan's inputs name uncappedBudget only where the cap held the plan below it.
    const capped = view(40, 1.0982);
    (capped.inputs as { uncappedBudget?: number }).uncappedBudget = 40;
    const out = renderPlan(capped);
    expect(out).toMatch(/^budget\s+40 GPU-hours\/hour \(planned for 1\.098 allocated: the plan cap, /m);
    expect(out).toContain('boa budget get');
    expect(out).not.toContain('to pay for 40');
  });
});

describe("boa plan's minimum", () => {
  it('names the paid minimum first and the allocated one beside it, as budget set, frontier and status do', () => {
    // Found in review: plan said "minimum feasible 12.35" (allocated) where budget set said 14.81 paid.
    expect(renderPlan({ ...view(40, 40), minFeasiblePaidBudget: 14.8148 })).toMatch(
      /^minimum feasible\s+14\.81 GPU-hours\/hour paid \(12\.35 allocated to jobs\) at the plan's rates$/m,
    );
    // At no overhead the two print alike: one figure.
    expect(renderPlan({ ...view(40, 40), minFeasiblePaidBudget: 12.34567 })).toMatch(
      /^minimum feasible\s+12\.35 GPU-hours\/hour at the plan's rates$/m,
    );
  });
});

describe("boa plan's predicted line", () => {
  it("says the JCT is the model's, and below the minimum that it leaves the queue out", () => {
    const out = renderPlan(view(10, 10, true));
    expect(out).toMatch(
      /^queue\s+the planning budget is below the minimum: the cheapest plan is used, jobs wait for the budget when even it does not fit \(there may be none waiting now: boa jobs list\), and the JCT below/m,
    );
    expect(out).toContain('no queueing, no node boot');
    expect(renderPlan(view(40, 36.5))).not.toMatch(/^queue /m);
    // The plan's test, not the paid budget's: a budget under the minimum that credit planned above it
    // queues nothing, and one over it that the paid/allocated correction planned below it does.
    expect(renderPlan(view(12, 13))).not.toMatch(/^queue /m);
    expect(renderPlan(view(13, 12, true))).toMatch(/^queue /m);
  });

  it('says a plan the credit raised to the minimum without paying for it widens the cheapest one', () => {
    // Budget 10, minimum 12.35: planned at 13, the cheapest plan times the credit.
    const out = renderPlan(view(10, 13, true));
    expect(out).toMatch(
      /^queue\s+the budget, with its credit of budget unspent earlier, is below the minimum: the cheapest plan is used, widened by that credit; jobs wait for the budget when even it does not fit/m,
    );
    expect(out).not.toContain('the planning budget is below the minimum');
    // Its budget line does not say the raised plan pays 10 (found trying boa: "planned for 126.4
    // allocated to pay for 40" beside a budget under its minimum of 125.9).
    expect(out).toMatch(
      /^budget\s+10 GPU-hours\/hour \(planned for 13 allocated: the cheapest plan, widened by the credit; see queue\)$/m,
    );
    expect(out).not.toContain('to pay for 10');
  });
});
