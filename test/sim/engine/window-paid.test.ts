import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxPaidInWindow, type PaidInterval } from '../../../src/sim/engine/window-paid.ts';

/** Paid GPU-seconds in [a, b], interval by interval. */
function paidIn(intervals: readonly PaidInterval[], a: number, b: number, to: number): number {
  return intervals.reduce((sum, { gpus, from, until }) => {
    const end = Math.min(until ?? to, to, b);
    const begin = Math.max(from, a);
    return end > begin ? sum + gpus * (end - begin) : sum;
  }, 0);
}

describe('the most paid in a window', () => {
  it('is the whole bill for a run shorter than the window, and a burst for a longer one', () => {
    const hour = 3600;
    const steady: PaidInterval = { gpus: 4, from: 0, until: null };
    expect(maxPaidInWindow([steady], 0, 10 * hour, 24 * hour)).toBe(4 * 10 * hour);
    // 8 GPUs all along, and 32 more for 6 hours from hour 30: the day holding the burst.
    const burst: PaidInterval = { gpus: 32, from: 30 * hour, until: 36 * hour };
    const run = [{ gpus: 8, from: 0, until: 48 * hour }, burst];
    expect(maxPaidInWindow(run, 0, 48 * hour, 24 * hour)).toBe((8 * 24 + 32 * 6) * hour);
    expect(maxPaidInWindow([], 0, 48 * hour, 24 * hour)).toBe(0);
  });

  it('equals the best window found by trying every start, on random bills', () => {
    const interval = fc
      .record({ gpus: fc.integer({ min: 1, max: 16 }), from: fc.integer({ min: 0, max: 200 }) })
      .chain(({ gpus, from }) =>
        fc
          .option(fc.integer({ min: from + 1, max: 260 }), { nil: null })
          .map((until): PaidInterval => ({ gpus, from, until })),
      );
    fc.assert(
      fc.property(
        fc.array(interval, { maxLength: 12 }),
        fc.integer({ min: 1, max: 120 }),
        (intervals, window) => {
          const to = 240;
          // Step times are whole seconds, so the best window starts on a whole second.
          let best = 0;
          for (let start = 0; start <= Math.max(0, to - window); start++) {
            best = Math.max(best, paidIn(intervals, start, Math.min(start + window, to), to));
          }
          expect(maxPaidInWindow(intervals, 0, to, window)).toBeCloseTo(best, 6);
        },
      ),
      { numRuns: 300 },
    );
  });
});
