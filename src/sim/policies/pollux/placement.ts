/**
 * Puts the chosen widths on nodes the way Pollux's repair step shapes its allocations: as few nodes as
 * possible per job, at most 16 nodes per job, and, with `avoidInterference`, at most one distributed
 * (multi-node) job per node. When that cannot fit a job, it is placed anyway on any free GPUs (Pollux
 * would rather run a job slowly than leave GPUs idle).
 */
import { everythingFree, type FreeGpus, placeBestFit, takeGpus } from '../../../core/exec/placement.ts';
import type { Allocation } from '../../policy.ts';
import { MAX_NODES_PER_JOB } from './speedup.ts';

export interface PlacementRequest {
  readonly id: number;
  readonly width: number;
  /** The job's current allocation when its chosen option keeps it; null otherwise. */
  readonly keep: Allocation | null;
}

export interface PlacementNode {
  readonly id: number;
  readonly gpus: number;
}

function distinctNodes(allocation: readonly number[]): number[] {
  return [...new Set(allocation)];
}

/**
 * Allocations for the requests on these nodes. With `keepCurrent`, requests that keep their allocation
 * are placed first exactly where they are (when it still fits); the rest go widest first.
 */
export function placeJobs(
  requests: readonly PlacementRequest[],
  nodes: readonly PlacementNode[],
  keepCurrent: boolean,
  avoidInterference: boolean,
): Map<number, Allocation> {
  const free: FreeGpus = new Map([...nodes].sort((a, b) => a.id - b.id).map((n) => [n.id, n.gpus]));
  const distributed = new Set<number>();
  const out = new Map<number, Allocation>();
  const take = (id: number, allocation: number[]) => {
    takeGpus(free, allocation);
    const spans = distinctNodes(allocation);
    if (avoidInterference && spans.length > 1) for (const node of spans) distributed.add(node);
    out.set(id, allocation);
  };

  const rest: PlacementRequest[] = [];
  for (const request of [...requests].sort((a, b) => a.id - b.id)) {
    if (request.width <= 0) continue;
    if (keepCurrent && request.keep !== null && fitsAsIs(request.keep, free, distributed)) {
      take(request.id, [...request.keep]);
    } else {
      rest.push(request);
    }
  }
  rest.sort((a, b) => b.width - a.width || a.id - b.id);
  for (const request of rest) {
    const allocation = placeOne(request.width, free, distributed);
    if (allocation.length > 0) take(request.id, allocation);
  }
  return out;
}

function fitsAsIs(allocation: Allocation, free: FreeGpus, distributed: ReadonlySet<number>): boolean {
  const counts = new Map<number, number>();
  for (const id of allocation) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const [id, count] of counts) {
    if ((free.get(id) ?? 0) < count) return false;
    if (counts.size > 1 && distributed.has(id)) return false;
  }
  return true;
}

/** One job: a single node if any fits it, else spread over nodes without a distributed job, else anywhere. */
function placeOne(width: number, free: FreeGpus, distributed: ReadonlySet<number>): number[] {
  const anywhere = placeBestFit(width, free);
  if (anywhere !== undefined && distinctNodes(anywhere).length === 1) return anywhere;
  const quiet: FreeGpus = new Map([...free].filter(([id]) => !distributed.has(id)));
  const spread = placeBestFit(width, quiet);
  if (spread !== undefined && distinctNodes(spread).length <= MAX_NODES_PER_JOB) return spread;
  if (anywhere !== undefined) return anywhere;
  // Fewer GPUs left than planned (nodes lost since the plan): the job runs on what there is.
  return everythingFree(free);
}
