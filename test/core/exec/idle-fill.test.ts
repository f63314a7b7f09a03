import { describe, expect, it } from 'vitest';
import { type FillCandidate, fillIdleGpus } from '../../../src/core/exec/idle-fill.ts';
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
});
