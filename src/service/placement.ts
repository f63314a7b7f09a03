import { executeWidths } from '../core/exec/index.ts';
import { NodeNumbering } from './node-numbering.ts';
import type { PoolNode } from './ports.ts';

export interface PlacementJob {
  readonly id: number;
  /** The job's current allocation (node id per GPU), as the service holds it. */
  readonly allocation: readonly string[];
}

export interface PlacementBounds {
  readonly gpusPerNode: number;
  readonly minNodes: number;
  readonly maxNodes: number;
}

export interface Placement {
  /** Only the jobs whose allocation changes, with their new one as node ids (empty: the job waits). */
  readonly changed: Map<number, readonly string[]>;
  readonly wantedGpus: number;
  readonly allocatedGpus: number;
  readonly desiredNodes: number;
}

/** Node names a placement numbers before it starts its numbering afresh (IncrementalPlacement). */
export const FORGET_NODES_PAST = 4096;

interface Placed {
  readonly id: number;
  /** The allocation array this placement was handed out as: another array means someone reset it. */
  allocation: readonly string[];
  readonly slots: readonly number[];
  seenAt: number;
}

function sameSlots(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The core executor over the pool's ready nodes, kept incrementally across ticks: it remembers where each
 * job runs and the GPUs used per node, so a job that keeps its width on nodes still ready costs a step
 * of a walk over what it remembers, and only the others (new, waiting, resizing, on a node that went
 * away) go through the executor, over the GPUs the settled jobs leave free. The result is the one the
 * executor would give with every settled job kept where it is (its first pass); with 1,000 jobs and a
 * few changes a tick, that keeps placement to a fraction of a millisecond (bench:tick).
 */
export class IncrementalPlacement {
  private numbering = new NodeNumbering();
  private readonly placed = new Map<number, Placed>();
  /**
   * The same records by job id, ascending (undefined: to be sorted again), walked alongside jobs that
   * come in id order, as the service's do: a map lookup per job cost 0.05-0.1 ms of the tick's decision
   * (bench:tick), its table cold after the rest of the tick.
   */
  private byId: Placed[] | undefined = [];
  /** GPUs of each ready node by number (0: not ready or gone) and GPUs in use on it. */
  private capacity = new Int32Array(0);
  private used = new Int32Array(0);
  /** The listing in which each node number last appeared (to find the nodes that went away). */
  private listed = new Int32Array(0);
  /** 1 for a node offered keep-only (PoolNode.keepOnly): its jobs stay, nothing new is placed there. */
  private keepOnly = new Uint8Array(0);
  private listing = 0;
  private readyIds: readonly string[] = [];
  private readyNumbers: readonly number[] = [];
  private allocated = 0;
  private tick = 0;

  /**
   * `forgetNodesPast`: node names numbered before the numbering is started afresh (also only past 4x
   * the listing). Numbers are never reused, so each node the pool ever listed (an EKS instance id per
   * launch) kept a number, a name and a slot in the per-number arrays for the service's life: with a
   * node launched every 2 minutes, about 40 KB a day without end (a heap snapshot diff of a long run).
   */
  constructor(private readonly forgetNodesPast = FORGET_NODES_PAST) {}

  /**
   * `jobs`: every active job, in priority order (FIFO by id); `widthOf` gives its width now (0 while it
   * has no plan: it waits). A function rather than a field, so a tick allocates nothing per job.
   * `keptOf`: a wider width a job may keep where it runs (the idle fill's, idle-fill.ts), neither
   * wanted nor placed anew: a job that no longer runs at it is placed at `widthOf`.
   */
  place<J extends PlacementJob>(
    jobs: readonly J[],
    widthOf: (job: J) => number,
    readyNodes: readonly PoolNode[],
    bounds: PlacementBounds,
    keptOf?: (job: J) => number,
  ): Placement {
    this.tick += 1;
    if (this.numbering.size > this.forgetNodesPast && this.numbering.size > 4 * readyNodes.length)
      this.forgetAll();
    const lostNodes = this.refreshNodes(readyNodes);
    const unsettled: Array<{ id: number; width: number; kept: number; current: readonly number[] }> = [];
    const previous = new Map<number, readonly string[]>();
    let wanted = 0;
    let settled = 0;
    const byId = this.byId ?? [...this.placed.values()].sort((a, b) => a.id - b.id);
    // Taken for this pass: a pass that throws leaves none, so the next one reads the map, not records
    // this one released.
    this.byId = undefined;
    let next = 0;
    // Jobs out of id order are looked up in the map instead, from the first of them on.
    let inOrder = true;
    let lastId = Number.NEGATIVE_INFINITY;
    const settledById: Placed[] = [];
    for (const job of jobs) {
      const width = widthOf(job);
      wanted += width;
      let record: Placed | undefined;
      if (inOrder && job.id > lastId) {
        while (next < byId.length && (byId[next] as Placed).id < job.id) next += 1;
        if (next < byId.length && (byId[next] as Placed).id === job.id) record = byId[next];
      } else {
        inOrder = false;
        record = this.placed.get(job.id);
      }
      lastId = job.id;
      if (record !== undefined) {
        if (
          record.allocation === job.allocation &&
          (width === record.slots.length || (width > 0 && keptOf?.(job) === record.slots.length)) &&
          (!lostNodes || this.allReady(record.slots))
        ) {
          record.seenAt = this.tick;
          settled += 1;
          if (inOrder) settledById.push(record);
          continue;
        }
        this.release(job.id, record);
      }
      const current =
        record?.allocation === job.allocation ? record.slots : this.numbering.slots(job.allocation);
      previous.set(job.id, job.allocation);
      unsettled.push({ id: job.id, width, kept: width > 0 ? (keptOf?.(job) ?? 0) : 0, current });
    }
    // What is left in the map besides the settled jobs belongs to jobs that are gone.
    if (settled < this.placed.size) this.forgetDeparted();

    const changed = new Map<number, readonly string[]>();
    // A job on a keep-only node keeps its place while its width holds, also when this placement did not
    // make it (after a restart): freeNodes() offers keep-only nodes to no one. So does a job at the width
    // `keptOf` lets it keep, where it runs, as it would had this placement made it (after a restart the
    // executor would place it anew at its width: a restart, and the idle fill's widening a second one).
    const kept = new Set<number>();
    for (const job of unsettled) {
      const keeps =
        job.width > 0 &&
        ((job.width === job.current.length && this.keepsPlace(job.current)) ||
          (job.kept > 0 && job.kept === job.current.length && this.fitsWhereItRuns(job.current)));
      if (!keeps) continue;
      this.hold(job.id, {
        id: job.id,
        allocation: previous.get(job.id) as readonly string[],
        slots: job.current,
        seenAt: this.tick,
      });
      kept.add(job.id);
    }
    const running = unsettled.filter((j) => j.width > 0 && !kept.has(j.id));
    const result =
      running.length > 0
        ? executeWidths(running, this.freeNodes(), { ...bounds, shortfall: 'partial', packResized: true })
            .allocations
        : new Map<number, number[]>();
    for (const job of unsettled) {
      if (kept.has(job.id)) continue;
      const slots = result.get(job.id) ?? [];
      const before = previous.get(job.id) as readonly string[];
      const same = sameSlots(slots, job.current);
      const allocation = same ? before : this.numbering.ids(slots);
      if (!same) changed.set(job.id, allocation);
      if (slots.length > 0) this.hold(job.id, { id: job.id, allocation, slots, seenAt: this.tick });
    }
    this.byId = inOrder ? this.mergedById(settledById, unsettled) : undefined;
    // GPUs left free on keep-only nodes serve no one: the nodes for the rest are asked for beside them.
    let stranded = 0;
    for (const n of this.readyNumbers) {
      if (this.keepOnly[n]) stranded += Math.max(0, (this.capacity[n] as number) - (this.used[n] as number));
    }
    const desiredNodes = Math.min(
      bounds.maxNodes,
      Math.max(bounds.minNodes, Math.ceil((wanted + stranded) / bounds.gpusPerNode)),
    );
    return { changed, wantedGpus: wanted, allocatedGpus: this.allocated, desiredNodes };
  }

  /**
   * Keeps this placement's state and returns what puts it back: the idle fill tries a pass that gives
   * lent GPUs back and keeps the pass before it when that places no more (idle-fill-pass.ts). Placing
   * the first pass again is not the same: a lent job on a node whose GPUs shrank is kept by the first
   * pass's check (its nodes listed) and moved by a later one's (its GPUs no longer fit there).
   */
  snapshot(): () => void {
    const saved = {
      numbering: this.numbering,
      placed: [...this.placed.values()].map((record) => ({ ...record })),
      capacity: this.capacity.slice(),
      used: this.used.slice(),
      listed: this.listed.slice(),
      keepOnly: this.keepOnly.slice(),
      listing: this.listing,
      readyIds: this.readyIds,
      readyNumbers: this.readyNumbers,
      allocated: this.allocated,
      tick: this.tick,
    };
    return () => {
      const { placed, ...fields } = saved;
      Object.assign(this, fields);
      this.placed.clear();
      for (const record of placed) this.placed.set(record.id, record);
      this.byId = undefined; // sorted again from the map at the next pass
    };
  }

  /** GPUs placed now: the last pass's and the moves since (moveTo). */
  get allocatedGpus(): number {
    return this.allocated;
  }

  /** Free GPUs of each ready node that takes new work (not keep-only), by number, after the last pass. */
  freeGpus(): Map<number, number> {
    const free = new Map<number, number>();
    for (const n of this.freeNodes()) free.set(n.id, n.gpus);
    return free;
  }

  /** Where the last pass left a job, by node number; undefined: nowhere. */
  slotsOf(id: number): readonly number[] | undefined {
    return this.placed.get(id)?.slots;
  }

  /**
   * Moves a job the last pass placed to `slots` (the idle fill widening it on its node). Returns its
   * node ids, or undefined when they are `before`'s (the allocation it runs with: then it is kept).
   */
  moveTo(id: number, slots: readonly number[], before: readonly string[]): readonly string[] | undefined {
    const record = this.placed.get(id);
    if (record === undefined) throw new Error(`job ${id} is not placed`);
    this.release(id, record);
    const ids = this.numbering.ids(slots);
    const same = ids.length === before.length && ids.every((node, i) => node === before[i]);
    const allocation = same ? before : ids;
    this.hold(id, { id, allocation, slots, seenAt: this.tick });
    // byId holds the record replaced: sorted again at the next pass.
    this.byId = undefined;
    return same ? undefined : allocation;
  }

  /** Node names numbered now (bounded by forgetNodesPast and the listing). */
  get numberedNodes(): number {
    return this.numbering.size;
  }

  /**
   * GPUs the last placement holds on a node (by the id allocations use): the jobs' allocations as of the
   * last tick, kept per node, so asking costs a lookup rather than a pass over every job.
   */
  gpusOn(id: string): number {
    const n = this.numbering.peek(id);
    return n === undefined ? 0 : (this.used[n] ?? 0);
  }

  /** Takes in the pool's ready nodes; true when a node that was ready is not any more. */
  private refreshNodes(readyNodes: readonly PoolNode[]): boolean {
    const ids = this.readyIds;
    let unchanged = ids.length === readyNodes.length;
    // Same nodes with the same GPUs, and the same ones keep-only.
    for (let i = 0; unchanged && i < ids.length; i++) {
      const node = readyNodes[i] as PoolNode;
      const n = this.readyNumbers[i] as number;
      unchanged =
        ids[i] === node.id && this.capacity[n] === node.gpus && this.keepOnly[n] === (node.keepOnly ? 1 : 0);
    }
    if (unchanged) return false;
    const numbers = this.numbersOf(readyNodes);
    this.growTo(this.numbering.size);
    const stamp = ++this.listing;
    let lost = false;
    for (let i = 0; i < numbers.length; i++) {
      const n = numbers[i] as number;
      const gpus = (readyNodes[i] as PoolNode).gpus;
      if (gpus < (this.capacity[n] as number)) lost = true;
      this.capacity[n] = gpus;
      this.keepOnly[n] = (readyNodes[i] as PoolNode).keepOnly ? 1 : 0;
      this.listed[n] = stamp;
    }
    for (const n of this.readyNumbers) {
      if (this.listed[n] !== stamp) {
        this.capacity[n] = 0;
        this.keepOnly[n] = 0;
        lost = true;
      }
    }
    this.readyIds = readyNodes.map((n) => n.id);
    this.readyNumbers = numbers;
    return lost;
  }

  /** Per-number arrays grow by doubling: node numbers only ever increase. */
  private growTo(size: number): void {
    if (this.capacity.length >= size) return;
    const length = Math.max(size, 2 * this.capacity.length, 64);
    const grown = (old: Int32Array) => {
      const next = new Int32Array(length);
      next.set(old);
      return next;
    };
    this.capacity = grown(this.capacity);
    const keepOnly = new Uint8Array(length);
    keepOnly.set(this.keepOnly);
    this.keepOnly = keepOnly;
    this.used = grown(this.used);
    this.listed = grown(this.listed);
  }

  /**
   * Node numbers of a listing. Pools list nodes in a stable order with a few added or gone per tick, so
   * the last listing is walked alongside and only ids that are not next in it are looked up by name.
   */
  private numbersOf(readyNodes: readonly PoolNode[]): number[] {
    const lastIds = this.readyIds;
    const lastNumbers = this.readyNumbers;
    // Position of each node number in the last listing, built on the first miss; a typed array, since
    // hashing thousands of entries each tick would cost more than the whole decision.
    let lastPosition: Int32Array | undefined;
    const numbers: number[] = [];
    let j = 0;
    for (const node of readyNodes) {
      if (j < lastIds.length && lastIds[j] === node.id) {
        numbers.push(lastNumbers[j] as number);
        j += 1;
        continue;
      }
      const n = this.numbering.number(node.id);
      numbers.push(n);
      // Re-align the walk after the node's place in the last listing (nodes gone before it).
      if (lastPosition === undefined) {
        lastPosition = new Int32Array(this.numbering.size).fill(-1);
        for (let k = 0; k < lastNumbers.length; k++) lastPosition[lastNumbers[k] as number] = k;
      }
      const k = n < lastPosition.length ? (lastPosition[n] as number) : -1;
      if (k >= j) j = k + 1;
    }
    return numbers;
  }

  /** The slots touch a keep-only node, and every node of them is listed with room for them. */
  private keepsPlace(slots: readonly number[]): boolean {
    let keepOnly = false;
    const count = new Map<number, number>();
    for (const n of slots) {
      if (n >= this.capacity.length) return false;
      if (this.keepOnly[n]) keepOnly = true;
      count.set(n, (count.get(n) ?? 0) + 1);
    }
    if (!keepOnly) return false;
    for (const [n, gpus] of count) {
      if (gpus > (this.capacity[n] as number) - (this.used[n] as number)) return false;
    }
    return true;
  }

  /** Every node of the slots is listed ready with room for them. */
  private fitsWhereItRuns(slots: readonly number[]): boolean {
    const count = new Map<number, number>();
    for (const n of slots) {
      if (n >= this.capacity.length) return false;
      count.set(n, (count.get(n) ?? 0) + 1);
    }
    for (const [n, gpus] of count) {
      if (gpus > (this.capacity[n] as number) - (this.used[n] as number)) return false;
    }
    return true;
  }

  private allReady(slots: readonly number[]): boolean {
    for (const n of slots) if ((this.capacity[n] as number) === 0) return false;
    return true;
  }

  private freeNodes(): Array<{ id: number; gpus: number; ready: true }> {
    const nodes: Array<{ id: number; gpus: number; ready: true }> = [];
    for (const n of this.readyNumbers) {
      if (this.keepOnly[n]) continue;
      const free = (this.capacity[n] as number) - (this.used[n] as number);
      if (free > 0) nodes.push({ id: n, gpus: free, ready: true });
    }
    return nodes;
  }

  private hold(id: number, record: Placed): void {
    for (const n of record.slots) this.used[n] = (this.used[n] as number) + 1;
    this.allocated += record.slots.length;
    this.placed.set(id, record);
  }

  private release(id: number, record: Placed): void {
    for (const n of record.slots) this.used[n] = (this.used[n] as number) - 1;
    this.allocated -= record.slots.length;
    this.placed.delete(id);
  }

  /**
   * The records held after a pass in id order, by id: the settled ones (met in id order) and those of
   * the jobs it placed (`unsettled`, in id order too). Departed jobs' records are gone by then.
   */
  private mergedById(settled: readonly Placed[], unsettled: ReadonlyArray<{ id: number }>): Placed[] {
    const merged: Placed[] = [];
    let i = 0;
    for (const job of unsettled) {
      const record = this.placed.get(job.id);
      if (record === undefined) continue;
      while (i < settled.length && (settled[i] as Placed).id < job.id) merged.push(settled[i++] as Placed);
      merged.push(record);
    }
    while (i < settled.length) merged.push(settled[i++] as Placed);
    return merged;
  }

  /**
   * Starts afresh, as after a restart: this pass takes every job as new, with its allocation as where it
   * runs, and the executor's first pass keeps each job that still fits where it is (placement.test.ts);
   * a new or resized job may take another of two equally good nodes than it would have.
   */
  private forgetAll(): void {
    this.numbering = new NodeNumbering();
    this.placed.clear();
    this.byId = [];
    this.capacity = new Int32Array(0);
    this.used = new Int32Array(0);
    this.listed = new Int32Array(0);
    this.keepOnly = new Uint8Array(0);
    this.readyIds = [];
    this.readyNumbers = [];
    this.allocated = 0;
  }

  /** Jobs that finished or were cancelled since the last tick give their GPUs back. */
  private forgetDeparted(): void {
    for (const [id, record] of this.placed) if (record.seenAt !== this.tick) this.release(id, record);
  }
}
