import { describe, expect, it } from 'vitest';
import { keptWithinPaidCap, raiseWithinPaidCap } from '../../../src/service/nodes/paid-cap.ts';
import { poolNode as node } from '../pool-node.ts';

const noneTerminated = { terminated: () => false };

describe('raiseWithinPaidCap', () => {
  it('leaves the pass alone without a budget', () => {
    expect(raiseWithinPaidCap([node('a')], 1, undefined, noneTerminated)).toBe(Number.POSITIVE_INFINITY);
  });

  it('counts paid nodes on their way out against the cap', () => {
    const nodes = [node('a'), node('b', { leaving: true }), node('c'), node('d')];
    const terminatedByBoa = { terminated: (id: string) => id === 'c' };
    // Kept: a, d. Paid and leaving: b (shutting down), c (boa terminated it). Cap 5 leaves room for 3.
    expect(raiseWithinPaidCap(nodes, 2, 5, terminatedByBoa)).toBe(3);
  });

  it('does not count a leaving node that is no longer billed', () => {
    const nodes = [node('a'), node('b', { leaving: true, billed: false })];
    expect(raiseWithinPaidCap(nodes, 1, 3, noneTerminated)).toBe(3);
  });

  it('never asks below the floor, so it sends no scale-in', () => {
    const nodes = [node('a'), node('b'), node('c', { leaving: true }), node('d', { leaving: true })];
    expect(raiseWithinPaidCap(nodes, 2, 2, noneTerminated)).toBe(2);
  });
});

describe('a replaced group of another instance type (its nodes paid at their own GPUs)', () => {
  // Four 4-GPU nodes of the replaced group, paid until CloudFormation deletes it; the new group's nodes
  // have 1 GPU, and the budget's cap is 16 of them (16 GPUs).
  const replaced = ['r1', 'r2', 'r3', 'r4'].map((id) =>
    node(id, { leaving: true, keepOnly: true, replacedGroup: 'gpu' }),
  );

  it('keeps no new node while the old ones take the whole cap (they were counted as 4 of 16)', () => {
    expect(keptWithinPaidCap(replaced, 16, 16, 1)).toBe(0);
    expect(keptWithinPaidCap(replaced, 16, 20, 1)).toBe(4);
  });

  it('raises the new group only within what the old nodes leave of the cap', () => {
    expect(raiseWithinPaidCap(replaced, 0, 16, noneTerminated, 1)).toBe(0);
    expect(raiseWithinPaidCap(replaced, 0, 18, noneTerminated, 1)).toBe(2);
  });

  it('counts an old node of fewer GPUs as its share of a new one, in whole new nodes', () => {
    // Two 1-GPU old nodes beside 4-GPU new ones: half a new node, so 3 of a cap of 4 fit beside them.
    const small = ['s1', 's2'].map((id) => node(id, { gpus: 1, leaving: true, replacedGroup: 'gpu' }));
    expect(keptWithinPaidCap(small, 4, 4, 4)).toBe(3);
    expect(raiseWithinPaidCap(small, 0, 4, noneTerminated, 4)).toBe(3);
  });
});

describe("the group's own nodes of more GPUs than configured (instance-type-check.ts)", () => {
  // 4-GPU instances in a group boa is configured to count in 1-GPU nodes.
  const big = ['a', 'b', 'c'].map((id) => node(id, { gpus: 4 }));

  it('keeps as many as their GPUs fit in the cap', () => {
    expect(keptWithinPaidCap(big, 3, 4.4, 1)).toBe(1);
    expect(keptWithinPaidCap(big, 3, 3, 1)).toBe(0);
    expect(keptWithinPaidCap(big, 3, 8, 1)).toBe(2);
  });

  it('leaves nodes of the configured GPUs to the target', () => {
    expect(keptWithinPaidCap([node('a', { gpus: 1 }), node('b', { gpus: 1 })], 2, 1, 1)).toBe(2);
  });
});
