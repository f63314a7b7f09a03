/**
 * SimJob.epochsEntered: when a job enters each statistical epoch within an interval, read before the
 * interval is run, so an emulated job can report an epoch when it enters it (src/sim/replay/world.ts).
 */
import { describe, expect, it } from 'vitest';
import { SimJob } from '../../../src/sim/engine/job.ts';
import { linearTruth, traceJob } from './fakes.ts';

/** 4 statistical epochs of 100 progress each; progress per second = GPUs. */
function job(): SimJob {
  return new SimJob(0, traceJob('j', 0), { truth: linearTruth(4, 100), statEpochEnds: [100, 200, 300, 400] });
}

describe('SimJob.epochsEntered', () => {
  it('names each epoch entered in the interval at the time the run reaches its start, the finish left out', () => {
    const j = job();
    j.assign([0, 1], [2], 0, 10); // 2 GPUs: 2 progress a second after a 10 s restart
    expect(j.epochsEntered(0, 1000)).toEqual([
      { epoch: 1, at: 60 },
      { epoch: 2, at: 110 },
      { epoch: 3, at: 160 },
    ]);
    // Only those within the interval; each where advancing the job shows it.
    expect(j.epochsEntered(0, 109)).toEqual([{ epoch: 1, at: 60 }]);
    j.advance(0, 109.9);
    expect(j.statEpoch).toBe(1);
    expect(j.epochsEntered(109.9, 200)).toEqual([
      { epoch: 2, at: 110 },
      { epoch: 3, at: 160 },
    ]);
    j.advance(109.9, 110.1);
    expect(j.statEpoch).toBe(2);
  });

  it('names none for a job without GPUs', () => {
    expect(job().epochsEntered(0, 1e9)).toEqual([]);
  });
});
