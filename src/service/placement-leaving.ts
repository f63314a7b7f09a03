/**
 * GPUs a pass frees by moving or narrowing a job off a node are still held there by the job's replicas
 * (SIGTERM, then up to terminationGraceSeconds): the same pass gives them to no other job. The held map
 * the pass started with (stopping-gpus.ts) could not know them, as they were running then.
 */
import { sameSlots, type Unsettled } from './placement-records.ts';

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
): Map<number, number> | undefined {
  let leaving: Map<number, number> | undefined;
  for (const job of unsettled) {
    if (job.current.length === 0 || kept.has(job.id)) continue;
    const slots = result.get(job.id) ?? [];
    if (sameSlots(slots, job.current) || !stopsReplicas(job.id)) continue;
    for (const n of job.current) {
      if (slots.includes(n)) continue;
      leaving ??= new Map();
      leaving.set(n, (leaving.get(n) ?? 0) + 1);
    }
  }
  return leaving;
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
