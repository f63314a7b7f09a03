/**
 * The incremental placement the scheduler runs every tick (IncrementalPlacement): its pass over the
 * jobs, the idle fill's moves and what callers ask of it. The nodes' side of its state is the node
 * table (placement-node-table.ts), the per-job records and their id order placement-records.ts, the
 * shapes it takes and gives placement-types.ts (exported here too).
 */
import { executeWidths } from '../core/exec/index.ts';
import { JobsByNode } from './placement-jobs-by-node.ts';
import { NodeTable } from './placement-node-table.ts';
import { type Leaving, leavingGpus, newcomersOverbooked, withLeavers } from './placement-leaving.ts';
import { holdWaitersForStopping, noteHeld } from './placement-wait-stopping.ts';
import { mergedById, type Placed, sameSlots, type Unsettled } from './placement-records.ts';
import type { Placement, PlacementBounds, PlacementJob } from './placement-types.ts';
import type { PoolNode } from './ports.ts';

export type { Placement, PlacementBounds, PlacementJob } from './placement-types.ts';

/** Node names a placement numbers before it starts its numbering afresh (IncrementalPlacement). */
export const FORGET_NODES_PAST = 4096;

const NO_LEAVERS: ReadonlyMap<string, readonly number[]> = new Map();

/**
 * The core executor over the pool's ready nodes, kept incrementally across ticks: it remembers where each
 * job runs and the GPUs used per node, so a job that keeps its width on nodes still ready costs a step
 * of a walk over what it remembers, and only the others (new, waiting, resizing, on a node that went
 * away) go through the executor, over the GPUs the settled jobs leave free. The result is the one the
 * executor would give with every settled job kept where it is (its first pass); with 1,000 jobs and a
 * few changes a tick, that keeps placement to a fraction of a millisecond (bench:tick).
 */
export class IncrementalPlacement {
  /** The ready nodes, numbered, with their GPUs and those held; a new one when numbering starts afresh. */
  private nodes = new NodeTable();
  private readonly placed = new Map<number, Placed>();
  /** The same records' jobs by the nodes they run on (the idle fill asks which run beside idle GPUs). */
  private readonly jobsByNode = new JobsByNode();
  /**
   * The same records by job id, ascending (undefined: to be sorted again), walked alongside jobs that
   * come in id order, as the service's do: a map lookup per job cost 0.05-0.1 ms of the tick's decision
   * (bench:tick), its table cold after the rest of the tick.
   */
  private byId: Placed[] | undefined = [];
  private allocated = 0;
  private tick = 0;
  /** GPUs stopping replicas hold per node (holdStopping), taken in by every pass. */
  private stopping: ReadonlyMap<string, number> = new Map();
  /** Of `stopping`, the GPUs of stops overdue (holdStopping): held, but no job waits for them. */
  private overdue: ReadonlyMap<string, number> = new Map();
  /** Whether a job's replicas hold its GPUs once it is moved or narrowed (holdStopping; none by default). */
  private stopsReplicas: (id: number) => boolean = () => false;
  /**
   * Jobs the last pass left waiting that GPUs stopping replicas hold would have made room for, each with
   * the nodes (ids) whose held GPUs it waits for.
   */
  private held: Map<number, readonly string[]> = new Map();
  /**
   * Per node (id), the jobs whose moves the last pass left GPUs held there (placement-leaving.ts): their
   * replicas were running when the tick listed the stopping ones, so the holders of a job the pass left
   * waiting are these too (stopping-gpus.ts heldBy). Empty unless a pass held such GPUs.
   */
  private leavers: ReadonlyMap<string, readonly number[]> = NO_LEAVERS;

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
    if (this.nodes.numbered > this.forgetNodesPast && this.nodes.numbered > 4 * readyNodes.length)
      this.forgetAll();
    const nodes = this.nodes;
    const lostNodes = nodes.refresh(readyNodes);
    nodes.setStopping(this.stopping);
    this.held = new Map();
    this.leavers = NO_LEAVERS;
    const unsettled: Unsettled[] = [];
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
      // A job waiting with no GPUs and none to get this pass: placing it changes nothing, and noting it
      // every tick (a record, a map entry) was 40% of placement's own time with 4,000 jobs waiting.
      if (record === undefined && width === 0 && job.allocation.length === 0) continue;
      if (record !== undefined) {
        if (
          record.allocation === job.allocation &&
          (width === record.gpus || (width > 0 && keptOf?.(job) === record.gpus)) &&
          (!lostNodes || nodes.allReady(record.slots))
        ) {
          record.seenAt = this.tick;
          settled += 1;
          if (inOrder) settledById.push(record);
          continue;
        }
        this.release(job.id, record);
      }
      const current = record?.allocation === job.allocation ? record.slots : nodes.slots(job.allocation);
      previous.set(job.id, job.allocation);
      unsettled.push({ id: job.id, width, kept: width > 0 ? (keptOf?.(job) ?? 0) : 0, current });
    }
    // What is left in the map besides the settled jobs belongs to jobs that are gone.
    if (settled < this.placed.size) this.forgetDeparted();

    const changed = new Map<number, readonly string[]>();
    const waiting: Unsettled[] = [];
    // A job on a keep-only node keeps its place while its width holds, also when this placement did not
    // make it (after a restart): freeNodes() offers keep-only nodes to no one. So does a job at the width
    // `keptOf` lets it keep, where it runs, as it would had this placement made it (after a restart the
    // executor would place it anew at its width: a restart, and the idle fill's widening a second one).
    const kept = new Set<number>();
    for (const job of unsettled) {
      const keeps =
        job.width > 0 &&
        ((job.width === job.current.length && nodes.keepsPlace(job.current)) ||
          (job.kept > 0 && job.kept === job.current.length && nodes.fitsWhereItRuns(job.current)));
      if (!keeps) continue;
      this.hold(job.id, {
        id: job.id,
        allocation: previous.get(job.id) as readonly string[],
        slots: job.current,
        gpus: job.current.length,
        seenAt: this.tick,
      });
      kept.add(job.id);
    }
    const running = unsettled.filter((j) => j.width > 0 && !kept.has(j.id));
    const execute = (some: readonly Unsettled[]) =>
      executeWidths(some, nodes.freeNodes(), { ...bounds, shortfall: 'partial', packResized: true })
        .allocations;
    const result = running.length > 0 ? execute(running) : new Map<number, number[]>();
    const leaving = leavingGpus(unsettled, kept, result, this.stopsReplicas);
    if (leaving !== undefined) this.holdLeaving(unsettled, result, leaving, execute);
    holdWaitersForStopping(nodes, this.overdue, unsettled, kept, result);
    for (const job of unsettled) {
      if (kept.has(job.id)) continue;
      const slots = result.get(job.id) ?? [];
      const before = previous.get(job.id) as readonly string[];
      const same = sameSlots(slots, job.current);
      const allocation = same ? before : nodes.ids(slots);
      if (!same) changed.set(job.id, allocation);
      if (slots.length > 0)
        this.hold(job.id, { id: job.id, allocation, slots, gpus: slots.length, seenAt: this.tick });
      else if (job.width > 0) waiting.push(job);
    }
    noteHeld(nodes, waiting, this.held);
    this.byId = inOrder ? mergedById(settledById, unsettled, this.placed) : undefined;
    // GPUs left free on keep-only nodes serve no one: the nodes for the rest are asked for beside them.
    const stranded = nodes.strandedGpus();
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
    const restoreNodes = this.nodes.snapshot();
    const saved = {
      nodes: this.nodes,
      placed: [...this.placed.values()].map((record) => ({ ...record })),
      allocated: this.allocated,
      tick: this.tick,
      held: this.held,
      leavers: this.leavers,
    };
    return () => {
      const { placed, ...fields } = saved;
      Object.assign(this, fields);
      // A pass that started the numbering afresh replaced the table: the one kept is put back as it was.
      restoreNodes();
      this.placed.clear();
      this.jobsByNode.clear();
      for (const record of placed) {
        this.placed.set(record.id, record);
        this.jobsByNode.add(record.id, record.slots);
      }
      this.byId = undefined; // sorted again from the map at the next pass
    };
  }

  /**
   * The GPUs replicas boa stops still hold per node (stopping-gpus.ts), for the passes until set again:
   * they go to no new placement, so a job that fits elsewhere goes there and one that fits nowhere waits
   * rather than being booked running while the executor holds its replicas back for up to the grace.
   * `stopsReplicas`: the jobs whose replicas the executor runs, whose GPUs a pass that moves or narrows
   * them holds for that pass too (placement-leaving.ts); a self-launched job's are the client's to free.
   * `overdue`: of `byNode`, the GPUs of replicas still there past their SIGKILL time (stopping-gpus.ts),
   * which no job waits for rather than running short (placement-wait-stopping.ts).
   */
  holdStopping(
    byNode: ReadonlyMap<string, number>,
    stopsReplicas: (id: number) => boolean,
    overdue: ReadonlyMap<string, number> = new Map(),
  ): void {
    this.stopping = byNode;
    this.stopsReplicas = stopsReplicas;
    this.overdue = overdue;
  }

  /** Jobs the last pass left waiting for GPUs stopping replicas still hold, with those nodes (noteHeld). */
  get heldByStopping(): ReadonlyMap<number, readonly string[]> {
    return this.held;
  }

  /** Per node (id), the jobs whose moves the last pass left GPUs held there (`leavers`). */
  get heldByLeaving(): ReadonlyMap<string, readonly number[]> {
    return this.leavers;
  }

  /** GPUs placed now: the last pass's and the moves since (moveTo). */
  get allocatedGpus(): number {
    return this.allocated;
  }

  /** Free GPUs of each ready node that takes new work (not keep-only), by number, after the last pass. */
  freeGpus(): Map<number, number> {
    const free = new Map<number, number>();
    for (const n of this.nodes.freeNodes()) free.set(n.id, n.gpus);
    return free;
  }

  /** The ids of the jobs placed with a GPU on any of `nodes` (node numbers), ascending. */
  jobsOn(nodes: Iterable<number>): number[] {
    return this.jobsByNode.on(nodes);
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
    const ids = this.nodes.ids(slots);
    const same = ids.length === before.length && ids.every((node, i) => node === before[i]);
    const allocation = same ? before : ids;
    this.hold(id, { id, allocation, slots, gpus: slots.length, seenAt: this.tick });
    // byId holds the record replaced: sorted again at the next pass.
    this.byId = undefined;
    return same ? undefined : allocation;
  }

  /** Node names numbered now (bounded by forgetNodesPast and the listing). */
  get numberedNodes(): number {
    return this.nodes.numbered;
  }

  /**
   * GPUs the last placement holds on a node (by the id allocations use): the jobs' allocations as of the
   * last tick, kept per node, so asking costs a lookup rather than a pass over every job.
   */
  gpusOn(id: string): number {
    return this.nodes.gpusOn(id);
  }

  private hold(id: number, record: Placed): void {
    this.nodes.take(record.slots);
    this.allocated += record.slots.length;
    this.placed.set(id, record);
    this.jobsByNode.add(id, record.slots);
  }

  private release(id: number, record: Placed): void {
    this.nodes.give(record.slots);
    this.allocated -= record.slots.length;
    this.placed.delete(id);
    this.jobsByNode.remove(id, record.slots);
  }

  /**
   * Starts afresh, as after a restart: this pass takes every job as new, with its allocation as where it
   * runs, and the executor's first pass keeps each job that still fits where it is (placement.test.ts);
   * a new or resized job may take another of two equally good nodes than it would have.
   */
  private forgetAll(): void {
    this.nodes = new NodeTable();
    this.placed.clear();
    this.jobsByNode.clear();
    this.byId = [];
    this.allocated = 0;
  }

  /**
   * The GPUs this pass's moves leave (placement-leaving.ts) go to no other job this pass: a job `result`
   * put where they do not leave it room is placed again without them (a pass over the few jobs moved,
   * and a second executor run only when one was put there).
   */
  private holdLeaving(
    unsettled: readonly Unsettled[],
    result: Map<number, number[]>,
    leaving: Leaving,
    execute: (jobs: readonly Unsettled[]) => Map<number, number[]>,
  ): void {
    const nodes = this.nodes;
    const left = new Map(leaving.held);
    for (const [n, gpus] of leaving.narrowed) left.set(n, (left.get(n) ?? 0) + gpus);
    const again = newcomersOverbooked(unsettled, result, (placed) => nodes.overbooked(placed, left));
    const idOf = (n: number) => nodes.ids([n])[0] as string;
    nodes.addStopping(leaving.held);
    this.leavers = withLeavers(this.leavers, leaving.heldBy, idOf);
    if (again.length === 0) return;
    nodes.addStopping(leaving.narrowed);
    this.leavers = withLeavers(this.leavers, leaving.narrowedBy, idOf);
    for (const job of again) result.delete(job.id);
    // The rest keep what they were given: taken while the others are placed again, given back after.
    for (const slots of result.values()) nodes.take(slots);
    const placed = execute(again);
    for (const slots of result.values()) nodes.give(slots);
    for (const [id, slots] of placed) result.set(id, slots);
  }

  /** Jobs that finished or were cancelled since the last tick give their GPUs back. */
  private forgetDeparted(): void {
    for (const [id, record] of this.placed) if (record.seenAt !== this.tick) this.release(id, record);
  }
}
