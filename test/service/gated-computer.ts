import type { PlanComputer } from '../../src/service/calculator/computer.ts';
import { computePlan, type PlanInputs, type PlanResult } from '../../src/service/calculator/compute.ts';

/**
 * A plan computer the test holds: each computation waits until the test lets it through (`go`) or
 * fails it, so what happens while one is in flight can be shown. `open` computes at once. Closing it
 * fails what is held, as the worker computer's close does.
 */
export class GatedComputer implements PlanComputer {
  open = true;
  readonly held: Array<{ inputs: PlanInputs; go: () => void; fail: (message: string) => void }> = [];

  compute(inputs: PlanInputs): Promise<PlanResult> {
    if (this.open) return Promise.resolve(computePlan(inputs));
    return new Promise((resolve, reject) =>
      this.held.push({
        inputs,
        go: () => resolve(computePlan(inputs)),
        fail: (message) => reject(new Error(message)),
      }),
    );
  }

  async close(): Promise<void> {
    for (const waiting of this.held.splice(0)) waiting.fail('plan computer closed');
  }
}
