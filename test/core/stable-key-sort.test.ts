/**
 * sortByKeyStable (core/stable-key-sort.ts) orders as the comparison sort it stands for: Array's
 * stable sort by key, equal keys in their order, with few distinct keys (grouped) and many.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortByKeyStable } from '../../src/core/stable-key-sort.ts';

const keyArb = fc.oneof(
  fc.constantFrom(0, -0, 600, 1800, 2400.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.double({ noNaN: true }),
);

describe('sortByKeyStable', () => {
  it('orders indices as a stable comparison sort by key', () => {
    fc.assert(
      fc.property(
        // Few distinct keys, repeated (the grouped path), or any (the comparison sort).
        fc.array(fc.constantFrom(0, -0, 600, 1800, 2400.5, Number.POSITIVE_INFINITY), {
          maxLength: 300,
          size: 'max',
        }),
        fc.array(keyArb, { maxLength: 300 }),
        fc.boolean(),
        (few, any, useFew) => {
          const keys = useFew ? few : any;
          // Indices into the keys in a scrambled order, as the waiting jobs' positions are to the sort.
          const order = Int32Array.from(keys.map((_, i) => (i * 7) % Math.max(1, keys.length)));
          const keyOf = (index: number) => keys[index] as number;
          const expected = Array.from(order).sort((a, b) => keyOf(a) - keyOf(b));
          sortByKeyStable(order, keyOf);
          expect(Array.from(order)).toEqual(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('groups ties in their order when few keys repeat', () => {
    // 40 jobs over 4 keys (0 and -0 one): the grouped path.
    const keys = Array.from(
      { length: 40 },
      (_, i) => [5, 1, Number.POSITIVE_INFINITY, -0, 0][i % 5] as number,
    );
    const order = Int32Array.from(keys.map((_, i) => i));
    sortByKeyStable(order, (index) => keys[index] as number);
    const withKey = (...wanted: number[]) => keys.flatMap((key, i) => (wanted.includes(key) ? [i] : []));
    expect(Array.from(order)).toEqual([
      ...withKey(0),
      ...withKey(1),
      ...withKey(5),
      ...withKey(Number.POSITIVE_INFINITY),
    ]);
  });
});
