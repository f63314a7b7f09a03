import { executeWidths } from '../core/exec/index.ts';
import type { PoolNode } from './ports.ts';

export interface WantedJob {
  readonly id: number;
  /** The plan's width now; 0 while the job has no plan yet (it waits). */
  readonly width: number;
  readonly allocation: readonly string[];
}

export interface Placement {
  /** Node numbers per GPU (see NodeNumbering), for every job that runs. */
  readonly allocations: Map<number, readonly number[]>;
  readonly desiredNodes: number;
}

/**
 * Cloud node ids are strings, the executor's are numbers. Numbers are stable for the service's life and
 * translations are cached per allocation array (arrays are replaced, never mutated), so a tick where
 * little changes translates little.
 */
export class NodeNumbering {
  private readonly numbers = new Map<string, number>();
  private readonly names: string[] = [];
  private readonly toSlots = new WeakMap<readonly string[], number[]>();
  private readonly toNames = new WeakMap<readonly number[], readonly string[]>();

  number(id: string): number {
    let n = this.numbers.get(id);
    if (n === undefined) {
      n = this.names.length;
      this.numbers.set(id, n);
      this.names.push(id);
    }
    return n;
  }

  slots(allocation: readonly string[]): number[] {
    let slots = this.toSlots.get(allocation);
    if (!slots) {
      slots = allocation.map((id) => this.number(id));
      this.toSlots.set(allocation, slots);
    }
    return slots;
  }

  ids(slots: readonly number[]): readonly string[] {
    let ids = this.toNames.get(slots);
    if (!ids) {
      ids = slots.map((n) => this.names[n] as string);
      this.toNames.set(slots, ids);
      this.toSlots.set(ids, slots as number[]);
    }
    return ids;
  }
}

/** The core executor over the pool's ready nodes. Jobs without a width yet only wait. */
export function placeJobs(
  jobs: readonly WantedJob[],
  readyNodes: readonly PoolNode[],
  bounds: { gpusPerNode: number; minNodes: number; maxNodes: number },
  numbering: NodeNumbering,
): Placement {
  const result = executeWidths(
    jobs
      .filter((j) => j.width > 0)
      .map((j) => ({ id: j.id, width: j.width, current: numbering.slots(j.allocation) })),
    readyNodes.map((n) => ({ id: numbering.number(n.id), gpus: n.gpus, ready: true })),
    {
      gpusPerNode: bounds.gpusPerNode,
      minNodes: bounds.minNodes,
      maxNodes: bounds.maxNodes,
      shortfall: 'partial',
    },
  );
  return { allocations: result.allocations, desiredNodes: result.desiredNodes };
}
