import type { PlanValue } from '../evaluate.ts';
import type { Instance } from '../instance.ts';
import {
  crossingMultiplier,
  LagrangianSolver,
  lagrangian,
  totalWeightedRate,
  type Vertex,
} from './lagrangian.ts';

/** The cost/JCT Pareto frontier: every vertex of the lower convex hull of achievable (budget, JCT). */
export interface Frontier {
  /** Ascending in budget, descending in JCT; the first is the minimum feasible budget. */
  readonly vertices: readonly Vertex[];
}

const MAX_VERTICES = 100_000;

/**
 * Lists every hull vertex between the cheapest plan and the fastest one by recursive slope probing:
 * between two known vertices, the Lagrangian at their segment's slope either lands on the segment
 * (they are adjacent) or finds a vertex strictly below it. Each vertex costs about two solves.
 */
export function computeFrontier(instance: Instance, solver = new LagrangianSolver(instance)): Frontier {
  const weightedRate = totalWeightedRate(instance);
  const cheapest = solver.cheapest();
  const fastest = solver.atMultiplier(0);
  const vertices: Vertex[] = [cheapest];
  // Depth-first from the cheap end so vertices come out in budget order.
  const stack: Array<[Vertex, Vertex]> = [];
  if (fastest.value.gpuHoursPerHour > cheapest.value.gpuHoursPerHour * (1 + 1e-12)) {
    stack.push([fastest, cheapest]);
  }
  while (stack.length > 0) {
    const [over, under] = stack.pop() as [Vertex, Vertex];
    const mu = crossingMultiplier(over, under, weightedRate);
    const probe = solver.atMultiplier(mu);
    const onSegment = lagrangian(over, mu, weightedRate);
    const below = lagrangian(probe, mu, weightedRate) < onSegment - 1e-10 * Math.abs(onSegment);
    const distinct =
      probe.value.gpuHoursPerHour < over.value.gpuHoursPerHour * (1 - 1e-12) &&
      probe.value.gpuHoursPerHour > under.value.gpuHoursPerHour * (1 + 1e-12);
    if (below && distinct && vertices.length < MAX_VERTICES) {
      // Process (probe, under) first: it lies at lower budgets.
      stack.push([over, probe], [probe, under]);
    } else {
      vertices.push(over);
    }
  }
  return { vertices };
}

/** The hull's value at a budget: the mixture of the two vertices around it (the exact calculator's value). */
export function frontierValueAt(frontier: Frontier, budget: number): PlanValue | undefined {
  const { vertices } = frontier;
  const first = vertices[0];
  if (!first || budget < first.value.gpuHoursPerHour * (1 - 1e-9)) return undefined;
  for (let i = 1; i < vertices.length; i++) {
    const b = vertices[i] as Vertex;
    if (budget <= b.value.gpuHoursPerHour) {
      const a = vertices[i - 1] as Vertex;
      const theta = (b.value.gpuHoursPerHour - budget) / (b.value.gpuHoursPerHour - a.value.gpuHoursPerHour);
      return {
        gpuHoursPerHour: budget,
        avgJctSeconds: theta * a.value.avgJctSeconds + (1 - theta) * b.value.avgJctSeconds,
      };
    }
  }
  return (vertices[vertices.length - 1] as Vertex).value;
}
