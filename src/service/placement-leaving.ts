/**
 * GPUs a pass frees by moving or narrowing a job off a node are still held there by the job's replicas
 * (SIGTERM, then up to terminationGraceSeconds): the same pass gives them to no other job. The held map
 * the pass started with (stopping-gpus.ts) could not know them, as they were running then.
 */
import { sameSlots, type Unsettled } from './placement-records.ts';

/** GPUs a pass's moves leave per node number (leavingGpus). */
export interface Leaving {
  /** On nodes the jobs leave (moved, or left waiting): held for the rest of the pass. */
  readonly held: Map<number, number>;
  /**
   * On nodes a narrowed job keeps: held for the rest of the pass only when a newcomer was put there
   * (IncrementalPlacement.holdLeaving). Otherwise the idle fill may give them back to it in the same pass
   * (one new generation, not a narrow one now and a wide one once its old replicas end:
   * kubernetes-crash.test.ts); from the next pass on its stopping replicas hold them (stopping-gpus.ts).
   */
  readonly narrowed: Map<number, number>;
  /** Per node number, the jobs leaving GPUs in `held` there (the view's heldBy from this pass on). */
  readonly heldBy: Map<number, number[]>;
  /** Likewise for `narrowed`. */
  readonly narrowedBy: Map<number, number[]>;
}

/**
 * Per node number, the GPUs that jobs this pass moves (elsewhere, narrower, or left waiting), whose
 * replicas the executor runs, held there beyond what they are given there now; undefined when none. A
 * job's own new replicas on a node wait for its old ones there anyway, so only the excess is held from
 * others (stopping-gpus.ts).
 */
export function leavingGpus(
  unsettled: readonly Unsettled[],
  kept: ReadonlySet<number>,
  result: ReadonlyMap<number, readonly number[]>,
  stopsReplicas: (id: number) => boolean,
): Leaving | undefined {
  let leaving: Leaving | undefined;
  for (const job of unsettled) {
    if (job.current.length === 0 || kept.has(job.id)) continue;
    const slots = result.get(job.id) ?? [];
    if (sameSlots(slots, job.current) || !stopsReplicas(job.id)) continue;
    // Per node, what it had there less what it is given there now.
    const excess = new Map<number, number>();
    for (const n of job.current) excess.set(n, (excess.get(n) ?? 0) + 1);
    for (const n of slots) if (excess.has(n)) excess.set(n, (excess.get(n) as number) - 1);
    for (const [n, gpus] of excess) {
      if (gpus <= 0) continue;
      leaving ??= { held: new Map(), narrowed: new Map(), heldBy: new Map(), narrowedBy: new Map() };
      const keeps = slots.includes(n);
      const into = keeps ? leaving.narrowed : leaving.held;
      into.set(n, (into.get(n) ?? 0) + gpus);
      const by = keeps ? leaving.narrowedBy : leaving.heldBy;
      const ids = by.get(n);
      if (ids === undefined) by.set(n, [job.id]);
      else ids.push(job.id);
    }
  }
  return leaving;
}

/**
 * `leavers` (jobs leaving held GPUs per node id) with `byNumber`'s added, as a new map when there are any:
 * the few jobs a pass moves, once a pass.
 */
export function withLeavers(
  leavers: ReadonlyMap<string, readonly number[]>,
  byNumber: ReadonlyMap<number, readonly number[]>,
  idOf: (n: number) => string,
): ReadonlyMap<string, readonly number[]> {
  if (byNumber.size === 0) return leavers;
  const out = new Map(leavers);
  for (const [n, ids] of byNumber) {
    const node = idOf(n);
    const before = out.get(node) ?? [];
    out.set(node, [...before, ...ids.filter((id) => !before.includes(id))]);
  }
  return out;
}

/**
 * The jobs `result` puts on a node they did not run on where, with the GPUs left there held, the node has
 * not room for all it was given: those are placed again, on what is free without the GPUs left.
 */
export function newcomersOverbooked(
  unsettled: readonly Unsettled[],
  result: ReadonlyMap<number, readonly number[]>,
  overbooked: (placedPerNode: ReadonlyMap<number, number>) => ReadonlySet<number>,
): Unsettled[] {
  const placed = new Map<number, number>();
  for (const slots of result.values()) for (const n of slots) placed.set(n, (placed.get(n) ?? 0) + 1);
  const over = overbooked(placed);
  if (over.size === 0) return [];
  return unsettled.filter((job) => {
    const slots = result.get(job.id);
    return slots !== undefined && slots.some((n) => over.has(n) && !job.current.includes(n));
  });
}
