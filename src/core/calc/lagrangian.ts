import { aggregate, type JobCost, type PlanValue } from '../evaluate.ts';
import type { Instance } from '../instance.ts';
import type { FixedPlan } from '../plan.ts';
import { type CompiledClass, compileClass, solveChain } from './chain.ts';

/** A fixed plan with its value: a candidate vertex of the (budget, JCT) lower hull. */
export interface Vertex {
  readonly plan: FixedPlan;
  readonly value: PlanValue;
}

/**
 * Minimisers of the Lagrangian sum_i lambda_i (w_i T_i + mu G_i): it separates by class, and each class
 * is one chain dynamic programme. Compiled once per instance, then solved for any multiplier.
 */
export class LagrangianSolver {
  private readonly compiled: readonly CompiledClass[];
  /** Number of dynamic programmes run, for benchmarks and tests. */
  solves = 0;

  constructor(readonly instance: Instance) {
    this.compiled = instance.classes.map(compileClass);
  }

  /** The plan minimising JCT + mu * budget (mu >= 0), ties to the cheaper plan. */
  atMultiplier(mu: number): Vertex {
    return this.collect((c) => solveChain(c, c.source.weight, mu));
  }

  /** The cheapest plan (ties to the faster): its budget is the minimum feasible budget. */
  cheapest(): Vertex {
    return this.collect((c) => solveChain(c, 0, 1));
  }

  private collect(solve: (c: CompiledClass) => { widths: number[] } & JobCost): Vertex {
    this.solves += 1;
    const solutions = this.compiled.map(solve);
    return { plan: solutions.map((s) => s.widths), value: aggregate(this.instance, solutions) };
  }
}

/** The Lagrangian of a vertex at multiplier mu, in the units the vertex search compares. */
export function lagrangian(vertex: Vertex, mu: number, totalWeightedRate: number): number {
  // JCT is an average; scaling it back to a rate-weighted sum keeps mu consistent with the class DP.
  return vertex.value.avgJctSeconds * totalWeightedRate + mu * vertex.value.gpuHoursPerHour * 3600;
}

export function totalWeightedRate(instance: Instance): number {
  return instance.classes.reduce((sum, c) => sum + c.ratePerHour * c.weight, 0);
}

/**
 * The multiplier at which two vertices have equal Lagrangians: the slope of the segment between them.
 * `over` must use more budget than `under`.
 */
export function crossingMultiplier(over: Vertex, under: Vertex, weightedRate: number): number {
  const dJ = (under.value.avgJctSeconds - over.value.avgJctSeconds) * weightedRate;
  const dG = (over.value.gpuHoursPerHour - under.value.gpuHoursPerHour) * 3600;
  return Math.max(0, dJ / dG);
}
