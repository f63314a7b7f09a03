import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MatchingError,
  maxWeightMatching,
  type WeightedEdge,
} from '../../../../src/sim/policies/cuckoo/matching.ts';

/** The best total weight over every matching, by trying each edge in or out. */
function bruteForce(vertices: number, edges: readonly WeightedEdge[]): number {
  const used = new Array<boolean>(vertices).fill(false);
  const go = (k: number): number => {
    if (k === edges.length) return 0;
    const e = edges[k] as WeightedEdge;
    let best = go(k + 1);
    if (!used[e.u] && !used[e.v]) {
      used[e.u] = used[e.v] = true;
      best = Math.max(best, e.weight + go(k + 1));
      used[e.u] = used[e.v] = false;
    }
    return best;
  };
  return go(0);
}

function weightOf(mate: Int32Array, edges: readonly WeightedEdge[]): number {
  let total = 0;
  for (const e of edges) if (mate[e.u] === e.v) total += e.weight;
  return total;
}

const graph = fc.integer({ min: 2, max: 9 }).chain((n) =>
  fc
    .uniqueArray(
      fc
        .tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 }))
        .filter(([u, v]) => u < v),
      { selector: ([u, v]) => `${u}-${v}`, maxLength: 20 },
    )
    .chain((pairs) =>
      fc
        .array(fc.integer({ min: 1, max: 1000 }), { minLength: pairs.length, maxLength: pairs.length })
        .map((ws) => ({
          n,
          edges: pairs.map(([u, v], k) => ({ u, v, weight: (ws[k] as number) / 100 })),
        })),
    ),
);

describe('maximum-weight matching (blossom)', () => {
  it('is a matching whose weight equals the brute-force maximum on random small graphs', () => {
    fc.assert(
      fc.property(graph, ({ n, edges }) => {
        const mate = maxWeightMatching(n, edges);
        for (let v = 0; v < n; v++) {
          const m = mate[v] as number;
          if (m >= 0) {
            expect(mate[m]).toBe(v);
            expect(edges.some((e) => (e.u === v && e.v === m) || (e.v === v && e.u === m))).toBe(true);
          }
        }
        expect(weightOf(mate, edges)).toBeCloseTo(bruteForce(n, edges), 6);
      }),
      { numRuns: 300 },
    );
  });

  it('picks the two outer edges of a path over its heavier middle one', () => {
    const edges = [
      { u: 0, v: 1, weight: 1.5 },
      { u: 1, v: 2, weight: 2 },
      { u: 2, v: 3, weight: 1.5 },
    ];
    expect([...maxWeightMatching(4, edges)]).toEqual([1, 0, 3, 2]);
  });

  it('leaves isolated vertices and a graph without edges unmatched, and refuses bad edges', () => {
    expect([...maxWeightMatching(3, [])]).toEqual([-1, -1, -1]);
    expect([...maxWeightMatching(4, [{ u: 0, v: 1, weight: 1 }])]).toEqual([1, 0, -1, -1]);
    expect(() => maxWeightMatching(2, [{ u: 0, v: 2, weight: 1 }])).toThrow(MatchingError);
    expect(() => maxWeightMatching(2, [{ u: 1, v: 1, weight: 1 }])).toThrow(/two different/);
    expect(() => maxWeightMatching(2, [{ u: 0, v: 1, weight: Number.NaN }])).toThrow(/finite/);
  });
});
