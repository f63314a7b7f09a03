/**
 * A width the idle fill lets a job keep (`keptOf`) holds in a placement that did not make it, as after a
 * restart: the job stays on the GPUs it runs on rather than being placed anew at its plan's width.
 */
import { describe, expect, it } from 'vitest';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import { BOUNDS, type Job, node, widthOf } from './placement-fixture.ts';

const widened = (): Job => ({ id: 1, width: 1, allocation: ['i-0', 'i-0', 'i-0', 'i-0'] });
const keepsFour = (job: Job) => (job.allocation.length === 4 ? 4 : 0);

describe('a kept width in a fresh placement', () => {
  it('keeps the job where it runs, its 4 GPUs held', () => {
    const placement = new IncrementalPlacement();
    const result = placement.place([widened()], widthOf, [node(0)], BOUNDS, keepsFour);
    expect(result.changed.size).toBe(0);
    expect(result.allocatedGpus).toBe(4);
    expect(placement.gpusOn('i-0')).toBe(4);
    // Without it the job is placed anew at its width.
    const plain = new IncrementalPlacement().place([widened()], widthOf, [node(0)], BOUNDS);
    expect(plain.changed.get(1)).toHaveLength(1);
  });

  it('not on a node that is no longer ready: placed anew at its width', () => {
    const placement = new IncrementalPlacement();
    const result = placement.place([widened()], widthOf, [node(1)], BOUNDS, keepsFour);
    expect(result.changed.get(1)).toEqual(['i-1']);
  });
});
