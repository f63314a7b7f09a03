import { describe, expect, it } from 'vitest';
import { AccelerationTable } from '../../../../src/sim/policies/cornucopia/acceleration.ts';
import { CLASSES } from './fakes.ts';

const table = new AccelerationTable([
  ...CLASSES,
  {
    name: 'dip',
    weight: 1,
    rescaleSeconds: 30,
    // 3 GPUs are under the hull (2 -> 4 is a straight 1.5 -> 2.5); past 4 nothing is gained.
    epochs: [{ workSeconds: 100, speedup: { '1': 1, '2': 1.5, '3': 1.8, '4': 2.5, '8': 2.4 } }],
  },
]);

describe('AccelerationTable', () => {
  it("gives the hull of the epoch's speedups: dips dropped, listed points on an edge kept", () => {
    expect(table.vertices('dip', 0).map((v) => v.width)).toEqual([1, 2, 4]);
    expect(table.vertices('short', 0).map((v) => v.width)).toEqual([1, 2, 3, 4, 8]);
    expect(table.vertices('long', 1).map((v) => v.width)).toEqual([1, 2]);
  });

  it('clamps the epoch to the profile and names unknown applications', () => {
    expect(table.vertices('long', 9)).toBe(table.vertices('long', 1));
    expect(() => table.vertices('nope', 0)).toThrow(
      /no profile for application "nope"; the profiles have: short/,
    );
  });
});
