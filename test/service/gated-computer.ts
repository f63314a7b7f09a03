import type { PlanComputer } from '../../src/service/calculator/computer.ts';
import type { PlanValue } from '../../src/core/evaluate.ts';
import {
  checkBudget,
  computePlan,
  frontierOf,
  type PlanInputs,
  type PlanProblem,
  type PlanResult,
} from '../../src/service/calculator/compute.ts';

/**
 * A plan computer the test holds: each computation waits until the test lets it through (`go`) or
 * fails it, so what happens while one is in flight can be shown. `open` computes at once. Closing it
 * fails what is held, as the worker computer's close does.
 */
export class GatedComputer implements PlanComputer {
  open = true;
  /** Ends a held computation when the planner no longer wants it, as the worker computer does. */
  endsWhenAborted = false;
  readonly held: Array<{ inputs: PlanInputs; go: () => void; fail: (message: string) => void }> = [];

  compute(inputs: PlanInputs, signal?: AbortSignal): Promise<PlanResult> {
    if (this.open) return Promise.resolve(computePlan(inputs));
    return new Promise((resolve, reject) => {
      const held = {
        inputs,
        go: () => resolve(computePlan(inputs)),
        fail: (message: string) => reject(new Error(message)),
      };
      this.held.push(held);
      if (!this.endsWhenAborted) return;
      signal?.addEventListener('abort', () => {
        this.held.splice(this.held.indexOf(held), 1);
        held.fail('plan computation no longer wanted: worker ended');
      });
    });
  }

  async close(): Promise<void> {
    for (const waiting of this.held.splice(0)) waiting.fail('plan computer closed');
  }
}

/**
 * A GatedComputer that also answers the queries (the load's minimum, the frontier) and holds each until
 * the test lets it through, so what the service does while one is computed can be shown.
 */
export class GatedQueries extends GatedComputer {
  readonly heldQueries: Array<{ task: 'minimum' | 'frontier'; problem: PlanProblem; go: () => void }> = [];

  minimum(problem: PlanProblem): Promise<number> {
    return this.hold('minimum', problem, () => checkBudget(problem, 0, false));
  }

  frontier(problem: PlanProblem): Promise<PlanValue[]> {
    return this.hold('frontier', problem, () => frontierOf(problem));
  }

  private hold<T>(task: 'minimum' | 'frontier', problem: PlanProblem, answer: () => T): Promise<T> {
    return new Promise((resolve) => this.heldQueries.push({ task, problem, go: () => resolve(answer()) }));
  }
}
