import type { PlanComputer } from '../../../src/service/calculator/computer.ts';
import { computePlan, type PlanInputs, type PlanResult } from '../../../src/service/calculator/compute.ts';

/**
 * A calculator gone wrong on the test's word: `failWith` fails each computation with that message (a
 * worker that died, a timeout), `spoil` answers the real plan spoiled. Neither set: the real plan.
 */
export class SpoilingComputer implements PlanComputer {
  failWith: string | undefined;
  spoil: ((result: PlanResult) => PlanResult) | undefined;
  computations = 0;

  async compute(inputs: PlanInputs): Promise<PlanResult> {
    this.computations += 1;
    if (this.failWith !== undefined) throw new Error(this.failWith);
    const result = computePlan(inputs);
    return this.spoil ? this.spoil(result) : result;
  }

  async close(): Promise<void> {}
}
