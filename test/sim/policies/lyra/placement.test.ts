import { describe, expect, it } from 'vitest';
import { placeDecreasing } from '../../../../src/sim/policies/lyra/placement.ts';

const node = (id: number, gpus = 4) => ({ id, gpus });

describe('placeDecreasing', () => {
  it('puts a job on the node with the fewest free GPUs that fits it', () => {
    // Node 0 is empty; job 1 keeps 2 GPUs on node 1 (2 free there). A new 2-GPU job fills node 1.
    const out = placeDecreasing(
      [
        { id: 1, width: 2, current: [1, 1] },
        { id: 2, width: 2, current: [] },
      ],
      [node(0), node(1)],
    );
    expect(out.get(1)).toEqual([1, 1]);
    expect(out.get(2)).toEqual([1, 1]);
  });

  it('places the largest first, so small jobs fill the gaps the large ones leave', () => {
    // Job 9 keeps 1 GPU of node 0 (3 free there, 4 on node 1). In request order, job 1 (1 GPU) would take
    // node 0's tightest gap, leaving 2 + 4 free, and job 3 (3 GPUs) would have to be spread. Largest first:
    // job 2 fills node 0, job 3 takes node 1 and job 1 the GPU left there. Nothing is spread.
    const out = placeDecreasing(
      [
        { id: 9, width: 1, current: [0] },
        { id: 1, width: 1, current: [] },
        { id: 2, width: 3, current: [] },
        { id: 3, width: 3, current: [] },
      ],
      [node(0), node(1)],
    );
    expect(out.get(2)).toEqual([0, 0, 0]);
    expect(out.get(3)).toEqual([1, 1, 1]);
    expect(out.get(1)).toEqual([1]);
  });

  it('spreads a job over nodes only when no node fits it whole', () => {
    const out = placeDecreasing([{ id: 1, width: 6, current: [] }], [node(0), node(1), node(2)]);
    expect(new Set(out.get(1)).size).toBe(2);
    const fits = placeDecreasing([{ id: 1, width: 4, current: [] }], [node(0, 2), node(1, 2), node(2)]);
    expect(fits.get(1)).toEqual([2, 2, 2, 2]);
  });

  it('keeps a job that keeps its width where it is, and re-places one that changes', () => {
    const out = placeDecreasing(
      [
        { id: 1, width: 2, current: [0, 1] },
        { id: 2, width: 3, current: [1] },
        { id: 3, width: 0, current: [2, 2] },
      ],
      [node(0), node(1), node(2)],
    );
    expect(out.get(1)).toEqual([0, 1]); // spread, but a move would cost a restart
    expect(out.get(2)).toHaveLength(3);
    expect(out.has(3)).toBe(false); // width 0: it waits
  });

  it('refuses widths that do not fit the nodes in total', () => {
    expect(() => placeDecreasing([{ id: 7, width: 5, current: [] }], [node(0)])).toThrow(
      /job 7: 5 GPUs do not fit/,
    );
  });
});
