import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  everythingFree,
  gpusPerNodeOf,
  placeBestFit,
  returnGpus,
  takeGpus,
} from '../../../src/core/exec/placement.ts';

const free = (entries: Array<[number, number]>) => new Map(entries);

describe('best-fit placement on as few nodes as possible', () => {
  it('puts a small job on the node it fills most tightly', () => {
    expect(
      placeBestFit(
        2,
        free([
          [0, 4],
          [1, 3],
          [2, 2],
        ]),
      ),
    ).toEqual([2, 2]);
    expect(
      placeBestFit(
        3,
        free([
          [0, 4],
          [1, 3],
          [2, 2],
        ]),
      ),
    ).toEqual([1, 1, 1]);
  });

  it('uses whole free nodes first and the tightest node for the rest', () => {
    // 6 GPUs: one empty node plus 2 on the node with exactly 2 free, not on the other empty one.
    expect(
      placeBestFit(
        6,
        free([
          [0, 4],
          [1, 4],
          [2, 2],
        ]),
      ),
    ).toEqual([0, 0, 0, 0, 2, 2]);
    expect(
      placeBestFit(
        5,
        free([
          [0, 4],
          [1, 4],
          [2, 1],
        ]),
      ),
    ).toEqual([0, 0, 0, 0, 2]);
  });

  it('breaks ties by the lower node id', () => {
    expect(
      placeBestFit(
        4,
        free([
          [5, 4],
          [3, 4],
        ]),
      ),
    ).toEqual([3, 3, 3, 3]);
  });

  it('returns undefined when too few GPUs are free, and rejects bad widths', () => {
    expect(
      placeBestFit(
        5,
        free([
          [0, 2],
          [1, 2],
        ]),
      ),
    ).toBeUndefined();
    expect(() => placeBestFit(0, free([[0, 4]]))).toThrow(/positive integer/);
    expect(() => placeBestFit(1.5, free([[0, 4]]))).toThrow(/positive integer/);
  });

  it('always uses the fewest nodes that can hold the width, and never more than is free', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 32 }),
        (frees, width) => {
          const map = free(frees.map((g, i) => [i, g]));
          const placed = placeBestFit(width, map);
          const total = frees.reduce((a, b) => a + b, 0);
          if (total < width) {
            expect(placed).toBeUndefined();
            return;
          }
          expect(placed).toHaveLength(width);
          const used = new Map<number, number>();
          for (const id of placed as number[]) used.set(id, (used.get(id) ?? 0) + 1);
          for (const [id, gpus] of used) expect(gpus).toBeLessThanOrEqual(frees[id] as number);
          // Fewest nodes: the smallest number of nodes whose free GPUs add up to the width.
          const sorted = [...frees].sort((a, b) => b - a);
          let fewest = 0;
          for (let sum = 0; sum < width; fewest++) sum += sorted[fewest] as number;
          expect(used.size).toBe(fewest);
          expect(placed).toEqual([...(placed as number[])].sort((a, b) => a - b));
        },
      ),
    );
  });
});

describe('free-GPU bookkeeping', () => {
  it('takes and returns GPUs, and refuses to take what is not free', () => {
    const map = free([
      [0, 4],
      [1, 1],
    ]);
    takeGpus(map, [0, 0, 1]);
    expect([...map]).toEqual([
      [0, 2],
      [1, 0],
    ]);
    expect(() => takeGpus(map, [1])).toThrow(/node 1 has no free GPU/);
    returnGpus(map, [0, 1]);
    expect([...map]).toEqual([
      [0, 3],
      [1, 1],
    ]);
  });

  it('lists every free GPU and turns allocations into GPUs per node', () => {
    expect(
      everythingFree(
        free([
          [4, 1],
          [2, 2],
          [3, 0],
        ]),
      ),
    ).toEqual([2, 2, 4]);
    expect(gpusPerNodeOf([3, 3, 7, 9, 9, 9])).toEqual([3, 2, 1]);
  });

  it('places as the rule reads, listing and sorting every free node, on random free GPUs', () => {
    // The rule written out as it reads: the fullest nodes carry all but the last part, which goes to
    // the tightest of the rest (placeBestFit finds a job one node holds in one pass instead).
    const byTheRule = (width: number, map: ReadonlyMap<number, number>) => {
      const nodes = [...map].filter(([, gpus]) => gpus > 0).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      let count = 0;
      let sum = 0;
      while (sum < width && count < nodes.length) sum += (nodes[count++] as [number, number])[1];
      if (sum < width) return undefined;
      const parts = nodes.slice(0, count - 1);
      const left = width - parts.reduce((a, [, gpus]) => a + gpus, 0);
      const last = nodes
        .slice(count - 1)
        .filter(([, gpus]) => gpus >= left)
        .sort((a, b) => a[1] - b[1] || a[0] - b[0])[0] as [number, number];
      return [...parts, [last[0], left] as [number, number]]
        .sort((a, b) => a[0] - b[0])
        .flatMap(([id, gpus]) => new Array<number>(gpus).fill(id));
    };
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 8 })), {
          selector: ([id]) => id,
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 20 }),
        (entries, width) => {
          const map = new Map(entries);
          expect(placeBestFit(width, map)).toEqual(byTheRule(width, map));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
