/**
 * The ready nodes as the incremental placement sees them (placement.ts): node ids numbered
 * (NodeNumbering), and per number the node's GPUs, the GPUs placed jobs hold there, whether it is
 * keep-only and the listing it last appeared in. Apart from the jobs' records because it is the other
 * half of the state with its own life: it changes with the pool's listing (taken in once a tick, cheaply
 * when the listing is as before), not with the jobs, and it answers the per-node questions (room on a
 * job's nodes, free GPUs, GPUs held). Typed arrays indexed by node number on purpose: it runs every tick
 * over ~1,400 nodes, where a map per node would cost more than the whole decision (bench:tick).
 */
import { NodeNumbering } from './node-numbering.ts';
import type { PoolNode } from './ports.ts';

/** A node with GPUs free for new work, by number, as the core executor takes it. */
export interface FreeNode {
  id: number;
  gpus: number;
  ready: true;
}

export class NodeTable {
  private numbering = new NodeNumbering();
  /** GPUs of each ready node by number (0: not ready or gone) and GPUs in use on it. */
  private capacity = new Int32Array(0);
  private used = new Int32Array(0);
  /**
   * GPUs replicas boa stops still hold on each node (stopping-gpus.ts): no new work is placed on them,
   * but the jobs placed there stay (a job's own older replicas are among them after a resize in place).
   */
  private stopping = new Int32Array(0);
  /** The node numbers `stopping` is set for, to clear them when it is set again. */
  private stoppingAt: number[] = [];
  /** The listing in which each node number last appeared (to find the nodes that went away). */
  private listed = new Int32Array(0);
  /** 1 for a node offered keep-only (PoolNode.keepOnly): its jobs stay, nothing new is placed there. */
  private keepOnly = new Uint8Array(0);
  private listing = 0;
  private readyIds: readonly string[] = [];
  private readyNumbers: readonly number[] = [];

  /** Node names numbered now. */
  get numbered(): number {
    return this.numbering.size;
  }

  /** Node numbers of an allocation (node ids), numbering ids not seen before. */
  slots(allocation: readonly string[]): number[] {
    return this.numbering.slots(allocation);
  }

  /** Node ids of slots (node numbers). */
  ids(slots: readonly number[]): readonly string[] {
    return this.numbering.ids(slots);
  }

  /** GPUs held on a node (by the id allocations use); 0 for a node never numbered. */
  gpusOn(id: string): number {
    const n = this.numbering.peek(id);
    return n === undefined ? 0 : (this.used[n] ?? 0);
  }

  /** Counts the slots' GPUs as held. */
  take(slots: readonly number[]): void {
    for (const n of slots) this.used[n] = (this.used[n] as number) + 1;
  }

  /** Counts the slots' GPUs as free again. */
  give(slots: readonly number[]): void {
    for (const n of slots) this.used[n] = (this.used[n] as number) - 1;
  }

  /**
   * Takes in the GPUs stopping replicas hold per node (by the id allocations use), after refresh: a
   * node not numbered is not listed ready, so its entry is not needed. Costs the entries, not the nodes.
   */
  setStopping(byNode: ReadonlyMap<string, number>): void {
    for (const n of this.stoppingAt) this.stopping[n] = 0;
    this.stoppingAt = [];
    for (const [id, gpus] of byNode) {
      const n = this.numbering.peek(id);
      if (n === undefined || n >= this.stopping.length) continue;
      this.stopping[n] = gpus;
      this.stoppingAt.push(n);
    }
  }

  /** Adds GPUs held on nodes (by number) for this pass: those this pass's moves leave (placement-leaving.ts). */
  addStopping(byNumber: ReadonlyMap<number, number>): void {
    // A copy: a snapshot (idle fill) keeps the array it saw.
    this.stoppingAt = [...this.stoppingAt];
    for (const [n, gpus] of byNumber) {
      if (n >= this.stopping.length) continue;
      if (this.stopping[n] === 0) this.stoppingAt.push(n);
      this.stopping[n] = (this.stopping[n] as number) + gpus;
    }
  }

  /** Of the nodes `placed` puts GPUs on (by number), those without room for them besides `leaving`. */
  overbooked(placed: ReadonlyMap<number, number>, leaving: ReadonlyMap<number, number>): Set<number> {
    const over = new Set<number>();
    for (const [n, left] of leaving) {
      const room =
        (this.capacity[n] ?? 0) - (this.used[n] ?? 0) - (this.stopping[n] ?? 0) - left - (placed.get(n) ?? 0);
      if (room < 0) over.add(n);
    }
    return over;
  }

  /**
   * The ready nodes taking new work where stopping replicas hold GPUs: by number, those held and those
   * free besides (a job waiting for them would fit where the two make its width).
   */
  stoppingNodes(): Array<{ n: number; held: number; free: number }> {
    const out: Array<{ n: number; held: number; free: number }> = [];
    for (const n of this.stoppingAt) {
      const capacity = this.capacity[n] as number;
      if (this.keepOnly[n] || capacity === 0) continue;
      const held = Math.min(capacity, this.stopping[n] as number);
      const free = Math.max(0, capacity - (this.used[n] as number) - (this.stopping[n] as number));
      if (held > 0) out.push({ n, held, free });
    }
    return out;
  }

  /** GPUs stopping replicas hold on the ready nodes that take new work: free once they have ended. */
  stoppingGpus(): number {
    let held = 0;
    for (const n of this.stoppingAt)
      if (!this.keepOnly[n]) held += Math.min(this.capacity[n] as number, this.stopping[n] as number);
    return held;
  }

  /** Of `byNode`'s GPUs (by node id), those on ready nodes that take new work, as stoppingGpus counts. */
  heldGpusOf(byNode: ReadonlyMap<string, number>): number {
    let held = 0;
    for (const [id, gpus] of byNode) {
      const n = this.numbering.peek(id);
      if (n === undefined || this.keepOnly[n]) continue;
      held += Math.min(this.capacity[n] ?? 0, gpus);
    }
    return held;
  }

  /**
   * Keeps the table's state and returns what puts it back (IncrementalPlacement.snapshot). The arrays
   * are copied; the numbering is shared, as numbers are never reused within it.
   */
  snapshot(): () => void {
    const saved = {
      numbering: this.numbering,
      capacity: this.capacity.slice(),
      used: this.used.slice(),
      stopping: this.stopping.slice(),
      stoppingAt: this.stoppingAt,
      listed: this.listed.slice(),
      keepOnly: this.keepOnly.slice(),
      listing: this.listing,
      readyIds: this.readyIds,
      readyNumbers: this.readyNumbers,
    };
    return () => {
      Object.assign(this, saved);
    };
  }

  /** Takes in the pool's ready nodes; true when a node that was ready is not any more. */
  refresh(readyNodes: readonly PoolNode[]): boolean {
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

  /** Every node of the slots is listed ready. */
  allReady(slots: readonly number[]): boolean {
    for (const n of slots) if ((this.capacity[n] as number) === 0) return false;
    return true;
  }

  /** The slots touch a keep-only node, and every node of them is listed with room for them. */
  keepsPlace(slots: readonly number[]): boolean {
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
  fitsWhereItRuns(slots: readonly number[]): boolean {
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

  /**
   * The ready nodes that take new work (not keep-only) with free GPUs, in listing order: neither placed
   * nor held by a stopping replica (another job's, or an older one of a job not on that node now: a
   * job's own, where it runs, are left out of the map, stopping-gpus.ts).
   */
  freeNodes(): FreeNode[] {
    const nodes: FreeNode[] = [];
    for (const n of this.readyNumbers) {
      if (this.keepOnly[n]) continue;
      const free = (this.capacity[n] as number) - (this.used[n] as number) - (this.stopping[n] as number);
      if (free > 0) nodes.push({ id: n, gpus: free, ready: true });
    }
    return nodes;
  }

  /** GPUs left free on keep-only nodes: they serve no one. */
  strandedGpus(): number {
    let stranded = 0;
    for (const n of this.readyNumbers) {
      if (this.keepOnly[n]) stranded += Math.max(0, (this.capacity[n] as number) - (this.used[n] as number));
    }
    return stranded;
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
    this.stopping = grown(this.stopping);
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
}
