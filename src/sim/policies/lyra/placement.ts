/**
 * Lyra's placement: best-fit decreasing. A running job that keeps its width stays where it is (moving
 * it would cost a restart for nothing); every other job is placed largest first, each onto the node
 * with the fewest free GPUs that fits it, spread over nodes (fullest-free first) only when no node
 * fits it whole.
 */
import { type FreeGpus, placeBestFit, takeGpus } from '../../../core/exec/placement.ts';
import type { Allocation } from '../../policy.ts';

export interface PlacementRequest {
  readonly id: number;
  /** GPUs the job gets this round (0: it waits). */
  readonly width: number;
  /** Its allocation now; empty while waiting. */
  readonly current: Allocation;
}

export class LyraPlacementError extends Error {
  override name = 'LyraPlacementError';
}

/** `nodes`: the ready nodes. The widths must fit their GPUs in total. */
export function placeDecreasing(
  requests: readonly PlacementRequest[],
  nodes: readonly { readonly id: number; readonly gpus: number }[],
): Map<number, Allocation> {
  const free: FreeGpus = new Map(nodes.map((n) => [n.id, n.gpus]));
  const allocations = new Map<number, Allocation>();
  const moving: PlacementRequest[] = [];
  for (const r of requests) {
    if (r.width === 0) continue;
    if (r.current.length === r.width && holds(free, r.current)) {
      takeGpus(free, r.current);
      allocations.set(r.id, r.current);
    } else moving.push(r);
  }
  moving.sort((a, b) => b.width - a.width || a.id - b.id);
  for (const r of moving) {
    const placed = placeBestFit(r.width, free);
    if (placed === undefined) {
      throw new LyraPlacementError(`job ${r.id}: ${r.width} GPUs do not fit in what is left of the nodes`);
    }
    takeGpus(free, placed);
    allocations.set(r.id, placed);
  }
  return allocations;
}

/** True when every GPU of the allocation is still free on a ready node. */
function holds(free: ReadonlyMap<number, number>, allocation: Allocation): boolean {
  const need = new Map<number, number>();
  for (const id of allocation) need.set(id, (need.get(id) ?? 0) + 1);
  for (const [id, gpus] of need) if ((free.get(id) ?? 0) < gpus) return false;
  return true;
}
