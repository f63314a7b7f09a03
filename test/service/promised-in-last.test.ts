/**
 * What the budget promised over the last hours, asked once per window the spend ceiling checks: the
 * prefix-summed query (promisedInLast) gives what the plain sum (promisedGpuHours) gives, for schedules of
 * budget changes in the order they were set, changes at one instant, values capped by the group's GPUs,
 * and a clock stepped back (a change set after the next one).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promisedGpuHours, promisedInLast } from '../../src/service/budget.ts';
import type { BudgetSetting } from '../../src/service/state.ts';

const HOUR = 3_600_000;

const value = fc.record({
  gpuHoursPerHour: fc.double({ min: 0.5, max: 500, noNaN: true }),
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 6 * HOUR })),
  maxGpus: fc.option(fc.integer({ min: 4, max: 256 }), { nil: undefined }),
  // Set before the one it follows: the clock stepped back.
  steppedBackMs: fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: HOUR })),
});

type Change = { gpuHoursPerHour: number; gapMs: number; maxGpus: number | undefined; steppedBackMs: number };

function schedule(values: Change[]): { budget: BudgetSetting; last: number } {
  let at = 1_000_000_000;
  const set = values.map((v) => {
    at += v.gapMs;
    return {
      gpuHoursPerHour: v.gpuHoursPerHour,
      setAt: at - v.steppedBackMs,
      ...(v.maxGpus === undefined ? {} : { maxGpus: v.maxGpus }),
    };
  });
  const current = set.at(-1)!;
  return { budget: { ...current, earlier: set.slice(0, -1) }, last: at };
}

describe('the budget promised over the last hours', () => {
  it('is the plain sum for every look-back, however the budget changed', () => {
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: -HOUR, max: 30 * HOUR }),
        fc.array(fc.double({ min: 0, max: 48, noNaN: true }), { minLength: 1, maxLength: 12 }),
        (values, afterLastMs, lookbacks) => {
          const { budget, last } = schedule(values);
          const now = last + afterLastMs;
          const fast = promisedInLast(budget, now);
          for (const hours of lookbacks) {
            const plain = promisedGpuHours(budget, now, hours);
            expect(Math.abs(fast(hours) - plain)).toBeLessThanOrEqual(1e-9 * Math.max(1, plain));
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
