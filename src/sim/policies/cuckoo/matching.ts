/**
 * Maximum-weight matching on a general graph (Edmonds' blossom algorithm), as CUCKOO's job packing
 * uses it (its Algorithm 3). The algorithm is the edmonds-blossom package: a JavaScript port of Joris van
 * Rantwijk's mwmatching.py, the reference implementation NetworkX also ports, O(n^3). Weights go in
 * as integers (scaled and rounded here) because that implementation is exact only on integers.
 * test/sim/policies/cuckoo/matching.test.ts checks it against brute force on random small graphs.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const blossom = require('edmonds-blossom') as (
  edges: [number, number, number][],
  maxCardinality?: boolean,
) => number[];

export interface WeightedEdge {
  readonly u: number;
  readonly v: number;
  /** Finite and > 0 (an edge worth nothing is left out). */
  readonly weight: number;
}

export class MatchingError extends Error {
  override name = 'MatchingError';
}

/** Weights are scaled to integers with this many steps per unit (CUCKOO's weights are ~0..2). */
export const WEIGHT_STEPS = 1_000_000;

/** mate[v] = the vertex matched with v, or -1; the matching maximises the total weight. */
export function maxWeightMatching(vertices: number, edges: readonly WeightedEdge[]): Int32Array {
  const mate = new Int32Array(vertices).fill(-1);
  const input: [number, number, number][] = [];
  for (const e of edges) {
    for (const end of [e.u, e.v]) {
      if (!(Number.isInteger(end) && end >= 0 && end < vertices)) {
        throw new MatchingError(`edge ends must be vertices 0..${vertices - 1}, got ${end}`);
      }
    }
    if (e.u === e.v) throw new MatchingError(`an edge needs two different vertices, got ${e.u} twice`);
    if (!Number.isFinite(e.weight)) throw new MatchingError(`edge weights must be finite, got ${e.weight}`);
    const w = Math.round(e.weight * WEIGHT_STEPS);
    if (w > 0) input.push([e.u, e.v, w]);
  }
  if (input.length === 0) return mate;
  const result = blossom(input, false);
  result.forEach((m, v) => {
    if (v < vertices) mate[v] = m;
  });
  return mate;
}
