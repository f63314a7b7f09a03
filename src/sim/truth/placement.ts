/** Placements: GPUs per node, e.g. [4, 4, 1] = three nodes holding 4, 4 and 1 GPUs. */

export type Placement = readonly number[];

function check(placement: Placement): number[] {
  const nodes = placement.filter((g) => g !== 0);
  for (const g of nodes) {
    if (!Number.isInteger(g) || g < 0) throw new RangeError(`GPUs per node must be integers >= 0, got ${g}`);
  }
  if (nodes.length === 0) throw new RangeError('a placement needs at least one GPU');
  return nodes;
}

/**
 * The placements.csv key of a placement: empty nodes dropped, then the lexicographically smallest
 * rotation (a placement and its rotations are the same measurement). Returns undefined when some node
 * holds more than 9 GPUs, which no digit string can express (such placements are never measured).
 */
export function placementKey(placement: Placement): string | undefined {
  const nodes = check(placement);
  if (nodes.some((g) => g > 9)) return undefined;
  const digits = nodes.join('');
  let best = digits;
  for (let i = 1; i < digits.length; i++) {
    const rotation = digits.slice(i) + digits.slice(0, i);
    if (rotation < best) best = rotation;
  }
  return best;
}

export function numNodes(placement: Placement): number {
  return check(placement).length;
}

export function numReplicas(placement: Placement): number {
  return check(placement).reduce((a, b) => a + b, 0);
}

/** k GPUs packed on as few nodes as possible: k = 6 -> [4, 2], k = 13 -> [4, 4, 4, 1]. */
export function packedPlacement(k: number, gpusPerNode = 4): number[] {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`width must be a positive integer, got ${k}`);
  const nodes: number[] = [];
  for (let left = k; left > 0; left -= gpusPerNode) nodes.push(Math.min(left, gpusPerNode));
  return nodes;
}
