/**
 * GPUs the idle fill lent are not load when the node reconciler picks a node to remove: a node running
 * one job widened 1 -> 4 runs less for the plan than a node running two jobs of 1 GPU each.
 */
import { describe, expect, it } from 'vitest';
import { bookedGpusOn, lentGpusByNode } from '../../src/service/idle-fill.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { chooseVictims } from '../../src/service/nodes/victims.ts';
import type { PoolNode } from '../../src/service/ports.ts';

const job = (allocation: string[], idleFillGpus?: number) =>
  ({ allocation, ...(idleFillGpus === undefined ? {} : { idleFillGpus }) }) as unknown as ServiceJob;

const node = (id: string): PoolNode => ({ id, name: id, gpus: 4, ready: true, launchedAt: 0 }) as PoolNode;

describe('lent GPUs and the choice of a node to remove', () => {
  it('counts lent GPUs per node, only for jobs the fill widened', () => {
    const lent = lentGpusByNode([job(['a', 'a', 'a', 'a'], 3), job(['b']), job(['b']), job([], 0)]);
    expect([...lent]).toEqual([['a', 3]]);
  });

  it('removes the node with one widened job before the node with two jobs', () => {
    const jobs = [job(['a', 'a', 'a', 'a'], 3), job(['b']), job(['b'])];
    const placed = new Map([
      ['a', 4],
      ['b', 2],
    ]);
    const booked = bookedGpusOn((name) => placed.get(name) ?? 0, jobs);
    expect([booked('a'), booked('b'), booked('c')]).toEqual([1, 2, 0]);
    expect(chooseVictims([node('a'), node('b')], 1, booked).map((n) => n.id)).toEqual(['a']);
    // Ranked by GPUs placed, lent ones included, the two jobs' node went.
    expect(chooseVictims([node('a'), node('b')], 1, (n) => placed.get(n) ?? 0).map((n) => n.id)).toEqual([
      'b',
    ]);
  });
});
