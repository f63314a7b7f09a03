import { describe, expect, it } from 'vitest';
import { raiseWithinPaidCap } from '../../../src/service/nodes/paid-cap.ts';
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
