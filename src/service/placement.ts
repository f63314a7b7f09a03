import { executeWidths } from '../core/exec/index.ts';
import type { PoolNode } from './ports.ts';

export interface WantedJob {
  readonly id: number;
  /** The plan's width now; 0 while the job has no plan yet (it waits). */
  readonly width: number;
  readonly allocation: readonly string[];
}

export interface Placement {
  readonly allocations: Map<number, string[]>;
  readonly desiredNodes: number;
}

/**
 * The core executor over the pool's nodes: cloud node ids are strings, the executor's are numbers,
 * so ids are mapped for the call and back. Jobs without a width yet only wait.
 */
export function placeJobs(
  jobs: readonly WantedJob[],
  readyNodes: readonly PoolNode[],
  bounds: { gpusPerNode: number; minNodes: number; maxNodes: number },
): Placement {
  const index = new Map(readyNodes.map((n, i) => [n.id, i]));
  const result = executeWidths(
    jobs
      .filter((j) => j.width > 0)
      .map((j) => ({
        id: j.id,
        width: j.width,
        // GPUs on nodes that are gone count as nothing: the job is placed afresh.
        current: j.allocation.every((id) => index.has(id))
          ? j.allocation.map((id) => index.get(id) as number)
          : [],
      })),
    readyNodes.map((n, i) => ({ id: i, gpus: n.gpus, ready: true })),
    {
      gpusPerNode: bounds.gpusPerNode,
      minNodes: bounds.minNodes,
      maxNodes: bounds.maxNodes,
      shortfall: 'partial',
    },
  );
  const allocations = new Map<number, string[]>();
  for (const [id, gpus] of result.allocations) {
    allocations.set(
      id,
      gpus.map((i) => (readyNodes[i] as PoolNode).id),
    );
  }
  return { allocations, desiredNodes: result.desiredNodes };
}
