/**
 * Where a job's GPUs go. Allocations are node ids, one per GPU, ascending ([3, 3, 7] = 2 GPUs on node 3
 * and 1 on node 7), the simulator's and the service's common form.
 */

/** Free GPUs per ready node, by node id. */
export type FreeGpus = Map<number, number>;

/**
 * Places `width` GPUs on as few nodes as possible, best fit: the fullest-free nodes carry all but the
 * last part, and the last part goes to the node whose free GPUs fit it most tightly, so partly used
 * nodes fill up before empty ones are split. Ties go to the lower node id (deterministic).
 * Returns undefined when the free GPUs are fewer than `width`.
 */
export function placeBestFit(width: number, free: ReadonlyMap<number, number>): number[] | undefined {
  if (!Number.isInteger(width) || width < 1) {
    throw new RangeError(`a width must be a positive integer number of GPUs, got ${width}`);
  }
  const single = tightestHolding(width, free);
  if (single !== undefined) return new Array<number>(width).fill(single);
  const nodes = [...free.entries()].filter(([, gpus]) => gpus > 0);
  // Most free first; among equals the lower id.
  nodes.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  let count = 0;
  let sum = 0;
  while (sum < width && count < nodes.length) sum += (nodes[count++] as [number, number])[1];
  if (sum < width) return undefined;
  const parts: Array<[number, number]> = [];
  let left = width;
  for (let i = 0; i < count - 1; i++) {
    const [id, gpus] = nodes[i] as [number, number];
    parts.push([id, gpus]);
    left -= gpus;
  }
  // The last part: the tightest node among those not used yet (the count-th fullest always fits).
  let last: [number, number] | undefined;
  for (let i = count - 1; i < nodes.length; i++) {
    const node = nodes[i] as [number, number];
    if (
      node[1] >= left &&
      (last === undefined || node[1] < last[1] || (node[1] === last[1] && node[0] < last[0]))
    )
      last = node;
  }
  parts.push([(last as [number, number])[0], left]);
  return expand(parts);
}

/**
 * The node whose free GPUs hold all of `width` most tightly (the lower id among equals), or undefined
 * when no node holds it: what the rule above picks then (its fullest node fits, so the last part is the
 * whole width), found in one pass instead of listing and sorting every free node for each job placed.
 */
function tightestHolding(width: number, free: ReadonlyMap<number, number>): number | undefined {
  let best: number | undefined;
  let bestGpus = Number.POSITIVE_INFINITY;
  // forEach: no [id, gpus] pair made per node.
  free.forEach((gpus, id) => {
    if (gpus >= width && (gpus < bestGpus || (gpus === bestGpus && id < (best as number)))) {
      best = id;
      bestGpus = gpus;
    }
  });
  return best;
}

/** Every free GPU, for the one job that runs short while nodes are missing. */
export function everythingFree(free: ReadonlyMap<number, number>): number[] {
  return expand([...free.entries()].filter(([, gpus]) => gpus > 0));
}

/** Removes an allocation's GPUs from the free map (they must be free). */
export function takeGpus(free: FreeGpus, allocation: readonly number[]): void {
  for (const id of allocation) {
    const left = (free.get(id) ?? 0) - 1;
    if (left < 0) throw new RangeError(`node ${id} has no free GPU left for this allocation`);
    free.set(id, left);
  }
}

/** Returns an allocation's GPUs to the free map. */
export function returnGpus(free: FreeGpus, allocation: readonly number[]): void {
  for (const id of allocation) free.set(id, (free.get(id) ?? 0) + 1);
}

/** GPUs per node of an allocation, largest first ([3, 3, 7] -> [2, 1]): the truth model's placement. */
export function gpusPerNodeOf(allocation: readonly number[]): number[] {
  const counts = new Map<number, number>();
  for (const id of allocation) counts.set(id, (counts.get(id) ?? 0) + 1);
  return [...counts.values()].sort((a, b) => b - a);
}

function expand(parts: ReadonlyArray<readonly [number, number]>): number[] {
  const out: number[] = [];
  for (const [id, gpus] of [...parts].sort((a, b) => a[0] - b[0])) {
    for (let g = 0; g < gpus; g++) out.push(id);
  }
  return out;
}
