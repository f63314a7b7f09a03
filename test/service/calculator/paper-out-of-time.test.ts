/**
 * The paper's solver (`solver: paper`) draws 50 glue configurations; on the largest profiles a config
 * allows that took past the worker's 5-minute timeout and the plan failed, with no fallback. Now it
 * stops drawing after PAPER_SOLVER_MS: its best plan so far, or the exact solver's when it has none.
 * A clock the test moves stands for the minutes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { solvePaper } from '../../../src/core/calc/paper.ts';
import {
  computePlan,
  instanceOf,
  PAPER_SOLVER_MS,
  type PlanInputs,
} from '../../../src/service/calculator/compute.ts';
import { DEFAULT_PROFILES } from '../../../src/service/boot.ts';

const profiles = JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8'));
const inputs: PlanInputs = {
  classes: profiles.classes,
  ratesPerHour: { cifar10: 8, bert: 1, imagenet: 0.5 },
  budget: 110,
  planningBudget: 110,
  solver: 'paper',
  gpusPerNode: 4,
  maxWidth: 64,
};

/** A clock at 0 for its first `calls` readings, past the paper solver's time after. */
function clockOutOfTimeAfter(calls: number) {
  let read = 0;
  return () => (read++ < calls ? 0 : PAPER_SOLVER_MS + 1);
}

describe("the paper's solver out of time", () => {
  it("answers the exact solver's plan when it has none of its own yet", () => {
    const exact = computePlan({ ...inputs, solver: 'exact' });
    // Given its time, it answers a plan of its own: otherwise this would show nothing.
    expect(computePlan(inputs).plan).not.toEqual(exact.plan);
    // Out of time at once (the clock's first reading is the start).
    const late = computePlan(inputs, clockOutOfTimeAfter(1));
    expect(late.plan).toEqual(exact.plan);
    expect(late.value).toEqual(exact.value);
  });

  it('answers its best plan so far once it has one: the first configuration, within the budget', () => {
    const late = computePlan(inputs, clockOutOfTimeAfter(2));
    const first = solvePaper(instanceOf(inputs), inputs.planningBudget, { configurations: 1 });
    expect(late.plan).toEqual(first?.plan);
    expect(late.value.gpuHoursPerHour).toBeLessThanOrEqual(inputs.planningBudget * (1 + 1e-9));
  });
});
