/**
 * GPUs a pass frees by moving a job off a node are still held there by its replicas until they have
 * stopped: the same pass places no other job on them (the held map it started with could not know them).
 */
import { describe, expect, it } from 'vitest';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import { StoppingGpus } from '../../src/service/stopping-gpus.ts';
import { BOUNDS, type Job, node, widthOf } from './placement-fixture.ts';

function twoOnNodeZero() {
  const placement = new IncrementalPlacement();
  const z: Job = { id: 1, width: 2, allocation: [] };
  const x: Job = { id: 2, width: 2, allocation: [] };
  const nodes = [node(0), node(1)];
  const first = placement.place([z, x], widthOf, [node(0)], BOUNDS);
  // Their replicas run under the executor: moved, they hold their GPUs until stopped.
  placement.holdStopping(new Map(), () => true);
  z.allocation = first.changed.get(1) as string[];
  x.allocation = first.changed.get(2) as string[];
  expect([...z.allocation, ...x.allocation]).toEqual(['i-0', 'i-0', 'i-0', 'i-0']);
  return { placement, z, x, nodes };
}

describe('GPUs a job moved off a node leaves there', () => {
  it('go to no new job in the same pass: it waits for them, held on that node', () => {
    const { placement, z, x, nodes } = twoOnNodeZero();
    // x grows to a node of its own; y arrives in the same pass and fits only where x was.
    x.width = 4;
    const y: Job = { id: 3, width: 2, allocation: [] };
    const result = placement.place([z, x, y], widthOf, nodes, BOUNDS);
    expect(result.changed.get(2)).toEqual(['i-1', 'i-1', 'i-1', 'i-1']);
    expect(result.changed.has(3)).toBe(false);
    expect(placement.gpusOn('i-0')).toBe(2);
    expect([...placement.heldByStopping]).toEqual([[3, ['i-0']]]);
    // y's holder is x from this pass on, though x's replicas were running when the tick listed stopping ones.
    expect([...placement.heldByLeaving]).toEqual([['i-0', [2]]]);
    const heldBy = new StoppingGpus().heldBy(placement.heldByStopping, placement.heldByLeaving);
    expect([...heldBy]).toEqual([[3, [2]]]);
    // The next pass, with nothing moved, leaves none (the stopping replicas' list names x then).
    x.allocation = result.changed.get(2) as string[];
    placement.place([z, x, y], widthOf, nodes, BOUNDS);
    expect(placement.heldByLeaving.size).toBe(0);
  });

  it('leave a new job free GPUs elsewhere in the same pass', () => {
    const { placement, z, x } = twoOnNodeZero();
    x.width = 4;
    const y: Job = { id: 3, width: 2, allocation: [] };
    const result = placement.place([z, x, y], widthOf, [node(0), node(1), node(2)], BOUNDS);
    expect(result.changed.get(3)).toHaveLength(2);
    expect(result.changed.get(3)).not.toContain('i-0');
    expect(placement.heldByStopping.size).toBe(0);
  });

  it("are free in the same pass when the job's replicas are not the executor's (self-launched)", () => {
    const { placement, z, x, nodes } = twoOnNodeZero();
    placement.holdStopping(new Map(), () => false);
    x.width = 4;
    const y: Job = { id: 3, width: 2, allocation: [] };
    const result = placement.place([z, x, y], widthOf, nodes, BOUNDS);
    expect(result.changed.get(3)).toEqual(['i-0', 'i-0']);
  });
});
