import { describe, expect, it } from 'vitest';
import { numNodes, numReplicas, packedPlacement, placementKey } from '../../../src/sim/truth/placement.ts';

describe('placementKey', () => {
  it('normalises to the lexicographically smallest rotation', () => {
    expect(placementKey([2, 1, 2, 2])).toBe('1222');
    expect(placementKey([2, 2, 2, 1])).toBe('1222');
    expect(placementKey([4, 1, 4])).toBe('144');
    expect(placementKey([4, 4, 1])).toBe('144');
    expect(placementKey([3, 4, 1, 2])).toBe('1234');
    // Rotations only, not sorting: 1324 and 1234 are different placements.
    expect(placementKey([2, 4, 1, 3])).toBe('1324');
  });

  it('drops empty nodes and refuses empty placements', () => {
    expect(placementKey([0, 2, 0, 1])).toBe('12');
    expect(() => placementKey([0, 0])).toThrow(/at least one GPU/);
    expect(() => placementKey([1.5])).toThrow(RangeError);
  });

  it('has no key for nodes with more than 9 GPUs', () => {
    expect(placementKey([12, 1])).toBeUndefined();
  });
});

describe('placement shape', () => {
  it('counts nodes and replicas ignoring empty nodes', () => {
    expect(numNodes([4, 0, 4, 1])).toBe(3);
    expect(numReplicas([4, 0, 4, 1])).toBe(9);
  });

  it('packs k GPUs 4 per node', () => {
    expect(packedPlacement(1)).toEqual([1]);
    expect(packedPlacement(6)).toEqual([4, 2]);
    expect(packedPlacement(13)).toEqual([4, 4, 4, 1]);
    expect(packedPlacement(64)).toEqual(Array(16).fill(4));
    expect(packedPlacement(5, 2)).toEqual([2, 2, 1]);
    expect(() => packedPlacement(0)).toThrow(/positive integer/);
  });
});
