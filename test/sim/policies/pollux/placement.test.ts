import { describe, expect, it } from 'vitest';
import { placeJobs } from '../../../../src/sim/policies/pollux/placement.ts';
import { gpusPerNodeUsed, nodes } from '../fakes.ts';

const request = (id: number, width: number, keep: number[] | null = null) => ({ id, width, keep });

/** Node ids hosting more than one multi-node job. */
function sharedByDistributedJobs(allocations: Map<number, readonly number[]>): number[] {
  const count = new Map<number, number>();
  for (const allocation of allocations.values()) {
    const spans = [...new Set(allocation)];
    if (spans.length > 1) for (const id of spans) count.set(id, (count.get(id) ?? 0) + 1);
  }
  return [...count].filter(([, n]) => n > 1).map(([id]) => id);
}

describe('placeJobs', () => {
  it('packs each job on as few nodes as possible, widest first', () => {
    const out = placeJobs([request(1, 2), request(2, 6), request(3, 2)], nodes(3), true, true);
    expect(out.get(2)).toEqual([0, 0, 0, 0, 1, 1]);
    // The two 2-GPU jobs fill node 1 and then node 2, best fit.
    expect(new Set(out.get(1))).toHaveProperty('size', 1);
    expect(new Set(out.get(3))).toHaveProperty('size', 1);
    expect([...gpusPerNodeUsed(out).values()].every((g) => g <= 4)).toBe(true);
  });

  it('leaves a kept job where it is, and moves it when keeping is off', () => {
    const requests = [request(1, 1, [2]), request(2, 4)];
    expect(placeJobs(requests, nodes(3), true, false).get(1)).toEqual([2]);
    expect(placeJobs(requests, nodes(3), false, false).get(1)).not.toEqual([2]);
  });

  it('with interference avoidance, puts at most one distributed job on a node when it can', () => {
    // Two 6-GPU jobs on 4 nodes: the first takes 4 + 2; fewest-nodes best fit alone would put the
    // second on 4 + the 2 left on the first job's node. It takes two fresh nodes instead.
    const out = placeJobs([request(1, 6), request(2, 6)], nodes(4), true, true);
    expect(sharedByDistributedJobs(out)).toEqual([]);
    expect(out.get(1)).toHaveLength(6);
    expect(out.get(2)).toHaveLength(6);
  });

  it('without it (the default), packs the second distributed job beside the first', () => {
    // The same two jobs: best fit on as few nodes as possible, three nodes, one left free.
    const out = placeJobs([request(1, 6), request(2, 6)], nodes(4), true, false);
    expect(sharedByDistributedJobs(out)).toHaveLength(1);
    expect(gpusPerNodeUsed(out).size).toBe(3);
  });

  it('keeps a distributed job where it is beside another only without the avoidance', () => {
    // Job 1 spans nodes 0 and 1; job 2 kept across nodes 1 and 2 shares node 1 with it.
    const requests = [request(1, 6, [0, 0, 0, 0, 1, 1]), request(2, 4, [1, 1, 2, 2])];
    expect(placeJobs(requests, nodes(4), true, false).get(2)).toEqual([1, 1, 2, 2]);
    expect(placeJobs(requests, nodes(4), true, true).get(2)).not.toEqual([1, 1, 2, 2]);
  });

  it('spreads a job that fits no single node over nodes without another distributed job', () => {
    // 3 + 3 on two nodes leaves 1 + 1: the 2-GPU job runs across them.
    const out = placeJobs([request(1, 3), request(2, 3), request(3, 2)], nodes(2), true, true);
    expect(out.get(3)).toEqual([0, 1]);
  });

  it('never gives out more GPUs than the nodes have, and only on the nodes given', () => {
    const given = nodes(2, {}, 10);
    const out = placeJobs([request(1, 4, [0, 0, 0, 0]), request(2, 4), request(3, 3)], given, true, false);
    const used = gpusPerNodeUsed(out);
    expect([...used.keys()].every((id) => id === 10 || id === 11)).toBe(true);
    expect([...used.values()].every((g) => g <= 4)).toBe(true);
    expect([...out.values()].reduce((s, a) => s + a.length, 0)).toBe(8);
  });

  it('skips jobs planned to wait', () => {
    expect(placeJobs([request(1, 0)], nodes(1), true, false).has(1)).toBe(false);
  });
});
