import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chooseExtras, type ExtraOption } from '../../../../src/sim/policies/lyra/knapsack.ts';

/** Every way of taking at most one option per job: the reference the programme must match. */
function bruteForce(jobs: ExtraOption[][], capacity: number): number {
  let best = 0;
  const walk = (j: number, used: number, value: number) => {
    if (used > capacity) return;
    if (j === jobs.length) {
      best = Math.max(best, value);
      return;
    }
    walk(j + 1, used, value);
    for (const o of jobs[j] as ExtraOption[]) walk(j + 1, used + o.extra, value + o.value);
  };
  walk(0, 0, 0);
  return best;
}

describe('chooseExtras', () => {
  it('solves a small case by hand: two jobs, 4 free GPUs', () => {
    // Job A: +1 GPU saves 100 s, +3 save 250 s. Job B: +1 saves 90 s, +2 save 170 s.
    // Within 4 GPUs: A+3 and B+1 (340 s) beat A+1 and B+2 (270 s) and A+1 and B+1 (190 s).
    const a = [
      { extra: 1, value: 100 },
      { extra: 3, value: 250 },
    ];
    const b = [
      { extra: 1, value: 90 },
      { extra: 2, value: 170 },
    ];
    expect(chooseExtras([a, b], 4)).toEqual({ extras: [3, 1], totalValue: 340 });
    // With 3 free: A+1 and B+2 (270) beats A+3 (250).
    expect(chooseExtras([a, b], 3)).toEqual({ extras: [1, 2], totalValue: 270 });
    expect(chooseExtras([a, b], 0)).toEqual({ extras: [0, 0], totalValue: 0 });
  });

  it('never takes an option that loses time (a restart worth more than the gain)', () => {
    expect(chooseExtras([[{ extra: 2, value: -30 }], [{ extra: 1, value: 0 }]], 8)).toEqual({
      extras: [0, 0],
      totalValue: 0,
    });
  });

  it('finds the best total within the free GPUs, as exhaustive search does', () => {
    const option = fc.record({
      extra: fc.integer({ min: 1, max: 6 }),
      value: fc.double({ min: -50, max: 500, noNaN: true }),
    });
    const instance = fc.record({
      jobs: fc.array(fc.array(option, { maxLength: 4 }), { minLength: 1, maxLength: 5 }),
      capacity: fc.integer({ min: 0, max: 12 }),
    });
    fc.assert(
      fc.property(instance, ({ jobs, capacity }) => {
        const result = chooseExtras(jobs, capacity);
        expect(result.totalValue).toBeCloseTo(bruteForce(jobs, capacity), 9);
        // The choice is real: each job's extras are one of its options (or none), within capacity,
        // and add up to the reported value.
        let used = 0;
        let value = 0;
        result.extras.forEach((extra, j) => {
          if (extra === 0) return;
          const taken = (jobs[j] as ExtraOption[]).filter((o) => o.extra === extra);
          expect(taken.length).toBeGreaterThan(0);
          used += extra;
          value += Math.max(...taken.map((o) => o.value));
        });
        expect(used).toBeLessThanOrEqual(capacity);
        expect(value).toBeCloseTo(result.totalValue, 9);
      }),
      { numRuns: 300 },
    );
  });

  it('names bad input', () => {
    expect(() => chooseExtras([], -1)).toThrow(/free GPUs must be an integer >= 0, got -1/);
    expect(() => chooseExtras([[{ extra: 0, value: 1 }]], 2)).toThrow(/whole number of extra GPUs >= 1/);
  });
});
