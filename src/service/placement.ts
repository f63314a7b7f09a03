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

/**
 * The core executor over the pool's ready nodes, done incrementally: a job that already has its width on
 * ready nodes stays put (as the executor's first pass would keep it), so only the others (new, waiting,
 * resizing, or on a node that went away) go through the executor, over the GPUs the settled jobs leave
 * free. With 1,000 jobs and a few changes a tick, that is the difference between milliseconds and
 * a fraction of one.
 */
export function placeJobs(
  jobs: readonly WantedJob[],
  readyNodes: readonly PoolNode[],
  bounds: { gpusPerNode: number; minNodes: number; maxNodes: number },
  numbering: NodeNumbering,
): Placement {
  const capacity: number[] = [];
  for (const node of readyNodes) capacity[numbering.number(node.id)] = node.gpus;
  const used = new Int32Array(capacity.length);
  const allocations = new Map<number, readonly number[]>();
  const unsettled: Array<{ id: number; width: number; current: readonly number[] }> = [];
  let wanted = 0;
  for (const job of jobs) {
    wanted += job.width;
    if (job.width === 0) continue;
    const slots = numbering.slots(job.allocation);
    let settled = slots.length === job.width;
    for (let i = 0; settled && i < slots.length; i++) settled = capacity[slots[i] as number] !== undefined;
    if (settled) {
      for (const n of slots) used[n] = (used[n] as number) + 1;
      allocations.set(job.id, slots);
    } else {
      unsettled.push({ id: job.id, width: job.width, current: slots });
    }
  }
  if (unsettled.length > 0) {
    const nodes = [];
    for (let n = 0; n < capacity.length; n++) {
      const gpus = capacity[n];
      if (gpus !== undefined && gpus > (used[n] as number))
        nodes.push({ id: n, gpus: gpus - (used[n] as number), ready: true });
    }
    const result = executeWidths(unsettled, nodes, { ...bounds, shortfall: 'partial' });
    for (const [id, slots] of result.allocations) allocations.set(id, slots);
  }
  const desiredNodes = Math.min(
    bounds.maxNodes,
    Math.max(bounds.minNodes, Math.ceil(wanted / bounds.gpusPerNode)),
  );
  return { allocations, desiredNodes };
}
