import { describe, expect, it } from 'vitest';
import { DEFAULT_FILL, type FillCandidate, fillIdleGpus } from '../../../src/core/exec/idle-fill.ts';
import { flat, oneEpochClass } from './one-epoch.ts';

const scales = oneEpochClass('scales', { 1: 1, 2: 1.8, 4: 3 });
const classes = new Map([
  ['scales', scales],
  ['flat', flat],
]);
const job = (id: number, app: string, progressFraction = 0): FillCandidate => ({
  id,
  app,
  statEpoch: 0,
  progressFraction,
  restarting: false,
});

describe('fillIdleGpus', () => {
  it('widens a job onto the idle GPUs of its own node, to the best listed width', () => {
    const allocations = new Map([[1, [7]]]);
    const out = fillIdleGpus(allocations, new Map([[7, 4]]), [job(1, 'scales')], classes);
    expect(out.get(1)).toEqual([7, 7, 7, 7]);
    expect(allocations.get(1)).toEqual([7]); // the input is left alone
  });

  it('takes a narrower listed width when the node has fewer idle GPUs', () => {
    const allocations = new Map([
      [1, [7]],
      [2, [7]],
    ]);
    const out = fillIdleGpus(allocations, new Map([[7, 4]]), [job(1, 'scales'), job(2, 'flat')], classes);
    expect(out.get(1)).toEqual([7, 7]);
    expect(out.get(2)).toEqual([7]); // 1.05x is not worth a restart
  });

  it('gives idle GPUs to the job with the longest remaining work first', () => {
    const allocations = new Map([
      [1, [7]],
      [2, [7]],
      [3, [7]],
    ]);
    const out = fillIdleGpus(
      allocations,
      new Map([[7, 4]]),
      [job(1, 'scales', 0.9), job(2, 'scales', 0.1), job(3, 'scales', 0.5)],
      classes,
    );
    expect(out.get(2)).toEqual([7, 7]);
    expect(out.get(1)).toEqual([7]);
    expect(out.get(3)).toEqual([7]);
  });

  it('leaves jobs near completion, restarting jobs, jobs on several nodes and other nodes alone', () => {
    const allocations = new Map([
      [1, [7]],
      [2, [8]],
      [3, [9, 10]],
    ]);
    const nodes = new Map([
      [7, 4],
      [8, 4],
      [9, 4],
      [10, 4],
      [11, 4],
    ]);
    // Job 1 has 0.5% of 10 hours left (180 s), under 20 restarts of 60 s.
    const out = fillIdleGpus(
      allocations,
      nodes,
      [job(1, 'scales', 0.995), { ...job(2, 'scales'), restarting: true }, job(3, 'scales')],
      classes,
    );
    expect(out).toEqual(allocations);
  });

  it('takes no GPU that adds no speedup: the narrower of two equal speedups, the rest left for others', () => {
    // plateau: 1.9 at 2 GPUs and still 1.9 at 3. Job 1 (more work left) goes to 2, not 3, so the
    // node's second idle GPU is left for job 2, which speeds up 1.8x on it.
    const plateau = oneEpochClass('plateau', { 1: 1, 2: 1.9, 3: 1.9 });
    const withPlateau = new Map([...classes, ['plateau', plateau]]);
    const allocations = new Map([
      [1, [7]],
      [2, [7]],
    ]);
    const out = fillIdleGpus(
      allocations,
      new Map([[7, 4]]),
      [job(1, 'plateau', 0), job(2, 'scales', 0.5)],
      withPlateau,
    );
    expect(out.get(1)).toEqual([7, 7]);
    expect(out.get(2)).toEqual([7, 7]);
  });

  describe('by time saved (minSavedRestarts, boa@fillK)', () => {
    // 10 hours on 1 GPU; restarts 60 s; 20 restarts: 1,200 s saved at least.
    const linear = oneEpochClass('linear', { 4: 4, 8: 8, 11: 10.1, 12: 10.8, 16: 13.9 });
    const saved = new Map([['linear', linear], ...classes]);
    const options = { ...DEFAULT_FILL, minSavedRestarts: 20 };

    it('widens a job on several nodes onto idle GPUs of its own nodes, not of other nodes', () => {
      // 11 GPUs on nodes 1-3 (4 + 4 + 3): one idle on node 3, four on node 4 (not the job's).
      const allocations = new Map([[1, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]]]);
      const nodes = new Map([
        [1, 4],
        [2, 4],
        [3, 4],
        [4, 4],
      ]);
      // 11 -> 12 GPUs: 10.1 -> 10.8, 36,000 / 10.1 - 36,000 / 10.8 = 231 s saved, over 3 restarts.
      const out = fillIdleGpus(allocations, nodes, [job(1, 'linear')], saved, {
        ...options,
        minSavedRestarts: 3,
      });
      expect(out.get(1)).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
      // The gain rule (1.1x) would not: 10.8 / 10.1 = 1.07.
      expect(fillIdleGpus(allocations, nodes, [job(1, 'linear')], saved).get(1)).toEqual(allocations.get(1));
    });

    it('gives an idle GPU two jobs on several nodes share to one of them, not to both', () => {
      const even = oneEpochClass('even', { 1: 1, 2: 2, 3: 3 });
      // Jobs 1 and 2 each hold a GPU of node 3 and one of a node of their own; node 3 has one idle.
      const allocations = new Map([
        [1, [1, 3]],
        [2, [2, 3]],
      ]);
      const nodes = new Map([
        [1, 1],
        [2, 1],
        [3, 3],
      ]);
      const out = fillIdleGpus(
        allocations,
        nodes,
        [job(1, 'even'), job(2, 'even', 0.5)],
        new Map([['even', even]]),
        options,
      );
      // Job 1 has more work left: it takes the idle GPU, and job 2 finds none.
      expect(out.get(1)).toEqual([1, 3, 3]);
      expect(out.get(2)).toEqual([2, 3]);
      const onNode3 = [...out.values()].flat().filter((node) => node === 3).length;
      expect(onNode3).toBeLessThanOrEqual(3);
    });

    it('takes a width only where it saves the restarts asked for', () => {
      const allocations = new Map([[1, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]]]);
      const nodes = new Map([
        [1, 4],
        [2, 4],
        [3, 4],
      ]);
      // 36,000 x (1/10.1 - 1/10.8) = 231 s saved: under 20 restarts of 60 s, over 3.
      expect(
        fillIdleGpus(allocations, nodes, [job(1, 'linear')], saved, { ...options, minSavedRestarts: 20 }).get(
          1,
        ),
      ).toHaveLength(11);
      expect(
        fillIdleGpus(allocations, nodes, [job(1, 'linear')], saved, { ...options, minSavedRestarts: 3 }).get(
          1,
        ),
      ).toHaveLength(12);
    });
  });
});
