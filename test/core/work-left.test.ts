import { describe, expect, it } from 'vitest';
import { waitingOrder, widthsUnderCeiling } from '../../src/core/ceiling-widths.ts';
import type { ClassProfile } from '../../src/core/profile.ts';
import { workDoneInEpochFromFraction, workLeftSeconds } from '../../src/core/work-left.ts';

// Three epochs of 100, 300 and 600 1-GPU seconds.
const profile = {
  name: 'c',
  epochs: [100, 300, 600].map((workSeconds) => ({ workSeconds, speedup: { 1: 1 } })),
} as unknown as ClassProfile;

describe('workLeftSeconds: the expected work a job has left, by its class profile', () => {
  it('adds the epochs from the job’s on, less what it did in its own', () => {
    expect(workLeftSeconds(profile, 0, 0)).toBe(1000);
    expect(workLeftSeconds(profile, 1, 50)).toBe(850);
    expect(workLeftSeconds(profile, 2, 600)).toBe(0);
    // Past its last epoch or beyond its work: none left, never below 0.
    expect(workLeftSeconds(profile, 3, 0)).toBe(0);
    expect(workLeftSeconds(profile, 2, 900)).toBe(0);
    // More done than its epoch's profile says leaves the epochs after it whole (found in review: 500
    // done in epoch 0 read as 500 left, not 900).
    expect(workLeftSeconds(profile, 0, 500)).toBe(900);
    expect(workLeftSeconds(profile, 0, Number.NaN)).toBe(1000);
    expect(workLeftSeconds(undefined, 0, 0)).toBeUndefined();
  });

  it('reads a fraction of the whole work done (the simulator’s jobs) as work done in the epoch', () => {
    // 45% of 1000 is 450: 100 of it in epoch 0, 300 in epoch 1, 50 in epoch 2.
    const done = workDoneInEpochFromFraction(profile, 2, 0.45);
    expect(done).toBe(50);
    expect(workLeftSeconds(profile, 2, done)).toBe(550);
    expect(workDoneInEpochFromFraction(profile, 1, 0.05)).toBe(0);
  });
});

describe('waitingOrder: the waiting jobs the ceiling serves first', () => {
  it('puts the least work left first, keeps the jobs’ order among equals, skips running jobs', () => {
    const running = [false, true, false, false, false];
    expect(waitingOrder(running, [500, 1, 100, 500, 100])).toEqual([2, 4, 0, 3]);
    // Without work left (no profile), a job comes after those with it; without the column, the jobs' order.
    expect(waitingOrder(running, [Number.POSITIVE_INFINITY, 1, 100, 500, Number.POSITIVE_INFINITY])).toEqual([
      2, 3, 0, 4,
    ]);
    expect(waitingOrder(running)).toEqual([0, 2, 3, 4]);
    // A work left that is not a number sorts as none, after the others, not anywhere.
    expect(waitingOrder(running, [Number.NaN, 1, 100, 500, 50])).toEqual([4, 2, 3, 0]);
  });

  it('serves jobs waiting past the bound first, oldest first, whatever their work', () => {
    const running = [false, false, true, false, false];
    const overdue = [false, true, false, false, true];
    expect(waitingOrder(running, [10, 900, 1, 50, 700], overdue)).toEqual([1, 4, 0, 3]);
  });

  it('gives the room the ceiling has to the job with the least left, not the oldest', () => {
    const jobs = [
      { id: 1, state: 'running', width: 4, left: 9000 },
      { id: 2, state: 'waiting', width: 4, left: 5000 },
      { id: 3, state: 'waiting', width: 4, left: 200 },
    ];
    const served = (gpus: number, byWork: boolean) =>
      [
        ...widthsUnderCeiling(
          jobs,
          (j) => j.width,
          (j) => (j.state === 'running' ? j.width : 0),
          gpus,
          () => undefined,
          () => false,
          () => 1,
          byWork ? { workLeftOf: (j) => j.left, overdue: () => false } : undefined,
        ).keys(),
      ].map((j) => j.id);
    expect(served(8, true)).toEqual([1, 3]);
    expect(served(8, false)).toEqual([1, 2]);
    // The running job keeps its place however much it has left.
    expect(served(4, true)).toEqual([1]);
  });
});
