import { describe, expect, it } from 'vitest';
import { Mlfq, type QueuedJob } from '../../../../src/sim/policies/cornucopia/queues.ts';

const job = (id: number, fields: Partial<QueuedJob> = {}): QueuedJob => ({
  id,
  kind: 'batch',
  runSeconds: 0,
  holding: 1,
  ...fields,
});

/** An MLFQ whose estimates give mean interactive 100 s, mean batch 1000 s, all jobs 700 s. */
function mlfq(recomputeEvery = 1000): Mlfq {
  const queues = new Mlfq({ recomputeEvery });
  queues.onArrival('interactive', 100);
  queues.onArrival('batch', 1000);
  queues.onArrival('batch', 1000);
  return queues;
}

describe('Mlfq (section 4.2)', () => {
  it('sets the thresholds from the means: 2x interactive, 2x RTTF, 2x batch', () => {
    expect(mlfq().thresholds()).toEqual({
      interactiveDemoteSeconds: 200,
      batchDemoteSeconds: 1400,
      promoteSeconds: 2000,
    });
  });

  it('puts interactive jobs in Queue 1 and batch jobs in Queue 2', () => {
    const levels = mlfq().update([job(1, { kind: 'interactive' }), job(2)], 0);
    expect(Object.fromEntries(levels)).toEqual({ 1: 1, 2: 2 });
  });

  it('demotes an interactive job that runs longer than twice the mean interactive duration', () => {
    const queues = mlfq();
    expect(queues.update([job(1, { kind: 'interactive', runSeconds: 200 })], 0).get(1)).toBe(1);
    expect(queues.update([job(1, { kind: 'interactive', runSeconds: 201 })], 60).get(1)).toBe(2);
    // Its Queue 2 time counts from the demotion: 1400 s more before Queue 3.
    expect(queues.update([job(1, { kind: 'interactive', runSeconds: 1600 })], 120).get(1)).toBe(2);
    expect(queues.update([job(1, { kind: 'interactive', runSeconds: 1601 })], 180).get(1)).toBe(3);
  });

  it('demotes a Queue 2 job whose executed time reaches twice the RTTF', () => {
    const queues = mlfq();
    expect(queues.update([job(1, { runSeconds: 1399 })], 0).get(1)).toBe(2);
    expect(queues.update([job(1, { runSeconds: 1400 })], 60).get(1)).toBe(3);
  });

  it('promotes a Queue 3 job after it has waited with no GPU for twice the mean batch duration', () => {
    const queues = mlfq();
    queues.update([job(1, { runSeconds: 1400 })], 0);
    // Time with a GPU (even one) does not count; only the intervals it was stripped of all GPUs.
    expect(queues.update([job(1, { runSeconds: 2400, holding: 1 })], 1000).get(1)).toBe(3);
    expect(queues.update([job(1, { runSeconds: 2400, holding: 0 })], 2000).get(1)).toBe(3);
    expect(queues.update([job(1, { runSeconds: 2400, holding: 1 })], 3000).get(1)).toBe(3);
    expect(queues.update([job(1, { runSeconds: 2400, holding: 0 })], 3999).get(1)).toBe(3);
    expect(queues.update([job(1, { runSeconds: 2400, holding: 0 })], 4000).get(1)).toBe(2);
    // Back in Queue 2, its executed time starts again: 1400 s more before it falls.
    expect(queues.update([job(1, { runSeconds: 3799 })], 4060).get(1)).toBe(2);
    expect(queues.update([job(1, { runSeconds: 3800 })], 4120).get(1)).toBe(3);
  });

  it('recomputes the means from completed jobs every N completions, not before', () => {
    const queues = mlfq(3);
    queues.onCompletion(10, 'interactive', 50);
    queues.onCompletion(11, 'batch', 300);
    expect(queues.thresholds().interactiveDemoteSeconds).toBe(200);
    queues.onCompletion(12, 'batch', 500);
    // Means now: interactive 50, batch 400, all 850 / 3.
    expect(queues.thresholds()).toEqual({
      interactiveDemoteSeconds: 100,
      batchDemoteSeconds: (2 * 850) / 3,
      promoteSeconds: 800,
    });
    queues.onCompletion(13, 'interactive', 1000);
    expect(queues.thresholds().interactiveDemoteSeconds).toBe(100);
  });

  it('uses the mean over all jobs for a kind not seen yet', () => {
    const queues = new Mlfq();
    queues.onArrival('batch', 600);
    expect(queues.thresholds().interactiveDemoteSeconds).toBe(1200);
  });
});
