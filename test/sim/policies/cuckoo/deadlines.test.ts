import { describe, expect, it } from 'vitest';
import { DEADLINE_FLOOR, deadline, deadlineFactor } from '../../../../src/sim/policies/cuckoo/deadlines.ts';
import { CuckooScheduler } from '../../../../src/sim/policies/cuckoo/scheduler.ts';
import { jobView } from '../fakes.ts';
import { context } from '../ones/fakes.ts';

describe('deadlines', () => {
  it('draws the same factor for the same seed and job, and other factors for other seeds', () => {
    expect(deadlineFactor(1, 42)).toBe(deadlineFactor(1, 42));
    const seed1 = Array.from({ length: 50 }, (_, id) => deadlineFactor(1, id));
    const seed2 = Array.from({ length: 50 }, (_, id) => deadlineFactor(2, id));
    expect(seed1).not.toEqual(seed2);
    expect(new Set(seed1).size).toBe(50);
  });

  it('follows N(8, 2), clipped at the floor', () => {
    const draws = Array.from({ length: 20_000 }, (_, id) => deadlineFactor(7, id));
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    const sd = Math.sqrt(draws.reduce((a, b) => a + (b - mean) ** 2, 0) / draws.length);
    expect(mean).toBeGreaterThan(7.95);
    expect(mean).toBeLessThan(8.05);
    expect(sd).toBeGreaterThan(1.95);
    expect(sd).toBeLessThan(2.05);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(DEADLINE_FLOOR);
    // About 0.13% of N(8, 2) lies below 2 (three standard deviations).
    const clipped = draws.filter((f) => f === DEADLINE_FLOOR).length;
    expect(clipped).toBeGreaterThan(5);
    expect(clipped).toBeLessThan(60);
  });

  it("puts a job's deadline at arrival + f x its fastest run time from the profile", () => {
    expect(deadline(100, 37.5, 8)).toBe(400);
    const scheduler = new CuckooScheduler(context(3));
    // `lin` is 300 s of 1-GPU work, linear up to 8 GPUs: 37.5 s at best; `dip` 400 / 4 = 100 s.
    expect(scheduler.fastestSeconds('lin')).toBeCloseTo(37.5);
    expect(scheduler.fastestSeconds('dip')).toBeCloseTo(100);
    const job = jobView(5, { arrival: 1000 });
    expect(scheduler.deadlineOf(job)).toBeCloseTo(1000 + deadlineFactor(3, 5) * 37.5);
  });
});
