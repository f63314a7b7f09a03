/**
 * The fixed-width executor (BOA.md, "Executing a plan"): given the width every active job should have
 * now, decide where each one runs and how many nodes the cluster should have. Pure: the simulator's
 * policies and the service call it with their own views of jobs and nodes.
 */
import { everythingFree, type FreeGpus, placeBestFit, returnGpus, takeGpus } from './placement.ts';

export interface ExecJob {
  readonly id: number;
  /** GPUs the job should have now (its plan's width, or its request). */
  readonly width: number;
  /** Current allocation, node id per GPU; empty while waiting. */
  readonly current: readonly number[];
  /**
   * GPUs to have nodes for (default: width): above the width when the caller knows the job will grow
   * soon, so the nodes boot before it needs them.
   */
  readonly provision?: number;
}

export interface ExecNode {
  readonly id: number;
  readonly gpus: number;
  /** Booting nodes count toward the cluster's size but take no allocations yet. */
  readonly ready: boolean;
}

export interface ExecOptions {
  readonly gpusPerNode: number;
  readonly minNodes?: number;
  readonly maxNodes: number;
  /**
   * When the ready GPUs cannot fit a waiting job: `partial` (BOA) runs the first such job on whatever is
   * left; `gang` (reservations) makes it wait, and every later waiting job waits behind it (strict FIFO).
   */
  readonly shortfall: 'partial' | 'gang';
  /**
   * Jobs resizing in one tick are placed together, the widest first (packedTogether), not one at a time.
   * The service's placement does; the simulator's policies do not: the matrix was measured one at a time,
   * and placing together moves every policy's runs by a few percent either way (docs/nodes.md).
   */
  readonly packResized?: boolean;
}

export interface ExecResult {
  /** Every job that runs after this tick, with its allocation; jobs left out wait. */
  readonly allocations: Map<number, number[]>;
  /** ceil(sum of widths (or provisions) / GPUs per node), clamped to [minNodes, maxNodes]. */
  readonly desiredNodes: number;
  /** Jobs running with fewer GPUs than their width (short of nodes), and jobs left waiting. */
  readonly short: readonly number[];
  readonly waiting: readonly number[];
}

/**
 * `jobs` must be in priority order (FIFO by arrival). Three passes, so no running job is ever stopped
 * to make room for another:
 * 1. a running job that already has its width on ready nodes stays where it is;
 * 2. running jobs whose width changed are re-placed, shrinking ones first (they free GPUs for the
 *    growing ones); a job that cannot grow yet keeps what it has rather than restarting twice;
 * 3. waiting jobs are placed best-fit on as few nodes as possible, in order.
 */
export function executeWidths(
  jobs: readonly ExecJob[],
  nodes: readonly ExecNode[],
  options: ExecOptions,
): ExecResult {
  checkOptions(options);
  const free: FreeGpus = new Map(nodes.filter((n) => n.ready).map((n) => [n.id, n.gpus]));
  const allocations = new Map<number, number[]>();
  const short: number[] = [];
  const waiting: number[] = [];
  const resizing: ExecJob[] = [];
  const queued: ExecJob[] = [];

  for (const job of jobs) {
    checkJob(job);
    if (job.current.length === 0 || !fits(free, job.current)) queued.push(job);
    else {
      takeGpus(free, job.current);
      if (job.current.length === job.width) allocations.set(job.id, [...job.current]);
      else resizing.push(job);
    }
  }

  const oneAtATime = options.packResized === true ? packTogether(resizing, free, allocations) : resizing;
  const shrinkingFirst = [
    ...oneAtATime.filter((j) => j.width < j.current.length),
    ...oneAtATime.filter((j) => j.width > j.current.length),
  ];
  for (const job of shrinkingFirst) {
    returnGpus(free, job.current);
    const placed = placeBestFit(job.width, free) ?? [...job.current];
    takeGpus(free, placed);
    allocations.set(job.id, placed);
    if (placed.length < job.width) short.push(job.id);
  }

  let blocked = false;
  let leftoversGiven = false;
  // Kept as a running total: with many waiting jobs, a search that cannot succeed is skipped.
  let freeTotal = freeCount(free);
  for (const job of queued) {
    const placed = blocked || job.width > freeTotal ? undefined : placeBestFit(job.width, free);
    if (placed !== undefined) {
      takeGpus(free, placed);
      allocations.set(job.id, placed);
      freeTotal -= placed.length;
    } else if (!blocked && options.shortfall === 'partial' && !leftoversGiven && freeTotal > 0) {
      const rest = everythingFree(free);
      takeGpus(free, rest);
      allocations.set(job.id, rest);
      short.push(job.id);
      leftoversGiven = true;
      freeTotal = 0;
    } else {
      if (options.shortfall === 'gang') blocked = true;
      waiting.push(job.id);
    }
  }

  const wanted = jobs.reduce((sum, j) => sum + Math.max(j.width, j.provision ?? 0), 0);
  const minNodes = options.minNodes ?? 0;
  const desiredNodes = Math.min(
    options.maxNodes,
    Math.max(minNodes, Math.ceil(wanted / options.gpusPerNode)),
  );
  return { allocations, desiredNodes, short, waiting };
}

/**
 * The jobs resizing this tick, placed together: their GPUs freed, then each placed best-fit, the widest
 * first. Each restarts anyway, so where it ran does not matter; one at a time, the first took the GPUs
 * the next was about to free, and two jobs growing in one tick were spread over 5 nodes and 2 where 4 and
 * 1 held them (found by a newcomer). While they do not all fit, the job growing most is left out (it
 * usually waits for a booting node) and keeps its GPUs for the one-at-a-time pass: before, one such job
 * sent every other back to one at a time. Returns the jobs left for that pass.
 */
function packTogether(
  resizing: readonly ExecJob[],
  free: FreeGpus,
  allocations: Map<number, number[]>,
): readonly ExecJob[] {
  const growth = (job: ExecJob): number => job.width - job.current.length;
  // Growing most first; among equals, the latest in priority order.
  const leaveOrder = resizing.map((job, index) => ({ job, index }));
  leaveOrder.sort((a, b) => growth(b.job) - growth(a.job) || b.index - a.index);
  const together = new Set(resizing);
  // GPUs needed beyond those the jobs hold: a cheap test that spares hopeless placements.
  let extraNeeded = resizing.reduce((sum, job) => sum + growth(job), 0);
  const freeTotal = freeCount(free);
  for (const { job } of leaveOrder) {
    if (together.size < 2) break;
    if (extraNeeded <= freeTotal && packAll([...together], free, allocations)) {
      return resizing.filter((other) => !together.has(other));
    }
    together.delete(job);
    extraNeeded -= growth(job);
  }
  return resizing;
}

/** Places every job, or none (false, nothing changed). */
function packAll(together: readonly ExecJob[], free: FreeGpus, allocations: Map<number, number[]>): boolean {
  for (const job of together) returnGpus(free, job.current);
  const widestFirst = [...together].sort((a, b) => b.width - a.width);
  const placed: number[][] = [];
  for (const job of widestFirst) {
    const gpus = placeBestFit(job.width, free);
    if (gpus === undefined) {
      for (const taken of placed) returnGpus(free, taken);
      for (const held of together) takeGpus(free, held.current);
      return false;
    }
    takeGpus(free, gpus);
    placed.push(gpus);
  }
  widestFirst.forEach((job, index) => allocations.set(job.id, placed[index] as number[]));
  return true;
}

/** True when every GPU of the allocation is on a ready node with room (the job can stay there). */
function fits(free: ReadonlyMap<number, number>, allocation: readonly number[]): boolean {
  // Allocations are ascending, so each node is one run: no per-job map on the hot path.
  let i = 0;
  while (i < allocation.length) {
    const id = allocation[i] as number;
    let run = 1;
    while (i + run < allocation.length && allocation[i + run] === id) run++;
    if (i + run < allocation.length && (allocation[i + run] as number) < id)
      return fitsUnsorted(free, allocation);
    if ((free.get(id) ?? 0) < run) return false;
    i += run;
  }
  return true;
}

function fitsUnsorted(free: ReadonlyMap<number, number>, allocation: readonly number[]): boolean {
  const need = new Map<number, number>();
  for (const id of allocation) need.set(id, (need.get(id) ?? 0) + 1);
  for (const [id, gpus] of need) if ((free.get(id) ?? 0) < gpus) return false;
  return true;
}

function freeCount(free: ReadonlyMap<number, number>): number {
  let sum = 0;
  for (const gpus of free.values()) sum += gpus;
  return sum;
}

function checkJob(job: ExecJob): void {
  if (!Number.isInteger(job.width) || job.width < 1) {
    throw new RangeError(`job ${job.id}: width must be a positive integer number of GPUs, got ${job.width}`);
  }
}

function checkOptions(options: ExecOptions): void {
  const { gpusPerNode, maxNodes } = options;
  const minNodes = options.minNodes ?? 0;
  if (!Number.isInteger(gpusPerNode) || gpusPerNode < 1) {
    throw new RangeError(`gpusPerNode must be a positive integer, got ${gpusPerNode}`);
  }
  if (!Number.isInteger(minNodes) || !Number.isInteger(maxNodes) || minNodes < 0 || maxNodes < minNodes) {
    throw new RangeError(
      `node bounds must be integers with 0 <= minNodes <= maxNodes, got ${minNodes}..${maxNodes}`,
    );
  }
}
