/**
 * The service's widths under the ceiling, read off the jobs' columns (budget-widths.ts: ceilingWidths
 * and a width looked up by position), are those of widthsUnderCeiling's map, which the simulator runs:
 * for every job, asked in the jobs' order (every job, or some skipped) or any other, and so is each job's queuedForBudget, with the
 * queue in either order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetLimitedWidths } from '../../src/service/budget-widths.ts';
import { type ServiceJob, plannedWidth } from '../../src/service/jobs.ts';
import type { ServiceState } from '../../src/service/state.ts';
import { widthsUnderCeiling } from '../../src/core/ceiling-widths.ts';
import { epochSpeedups } from '../../src/core/profile.ts';
import { weightedWorkLeft } from '../../src/core/work-left.ts';

const HOUR = 3_600_000;
const table = (exponent: number, widest: number) =>
  Object.fromEntries(Array.from({ length: widest }, (_, i) => [String(i + 1), (i + 1) ** exponent]));
// Tables that scale well, poorly, and one slower past 4 GPUs (as cifar10's first epoch); two epochs.
const classes = new Map(
  [
    ['a', [table(0.9, 16), table(0.5, 8)]],
    ['b', [table(0.6, 8)], 4],
    ['c', [{ ...table(0.8, 4), '5': 2, '6': 2.5, '8': 3.2 }, table(0.95, 32)], 0.5],
  ].map(([name, epochs, weight]) => [
    name,
    {
      profile: {
        name,
        // Each epoch with its work (the queue's order reads it): 600 s and 1800 s by turns.
        epochs: (epochs as object[]).map((speedup, i) => ({ speedup, workSeconds: i % 2 ? 1800 : 600 })),
        // Classes weighted unlike each other: the columns carry each job's weight.
        weight: (weight as number | undefined) ?? 1,
      },
    },
  ]),
) as unknown as ServiceState['classes'];

const jobArb = fc.record({
  className: fc.constantFrom('a', 'b', 'c', 'gone'),
  running: fc.boolean(),
  widths: fc.option(fc.array(fc.integer({ min: 0, max: 16 }), { minLength: 1, maxLength: 3 }), { nil: null }),
  statEpoch: fc.nat(3),
  width: fc.nat(16),
  waitedHours: fc.double({ min: 0, max: 30, noNaN: true }),
  workDoneSeconds: fc.double({ min: 0, max: 2000, noNaN: true }),
});

describe('budgetLimitedWidths: columns against the map', () => {
  it('gives every job the width widthsUnderCeiling gives it', () => {
    fc.assert(
      fc.property(
        fc.array(jobArb, { maxLength: 60, size: 'max' }),
        fc.integer({ min: 0, max: 200 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.integer({ min: 0, max: 2 * HOUR }),
        fc.nat(),
        fc.constantFrom('least-work-left', 'submitted'),
        fc.integer({ min: 1, max: 30 }),
        (specs, whole, fraction, longWaitMs, seed, order, overdueHours) => {
          const now = 10 * HOUR;
          const gpus = whole + fraction;
          const jobs = specs.map(
            (s, id) =>
              ({
                id,
                className: s.className,
                state: s.running ? 'running' : 'waiting',
                widths: s.widths,
                statEpoch: s.statEpoch,
                // Any width: what a job not running holds is not the ceiling's to count.
                width: s.width,
                idleFillGpus: 0,
                submittedAt: now - s.waitedHours * HOUR,
                workDoneSeconds: s.workDoneSeconds,
              }) as unknown as ServiceJob,
          );
          const expected = widthsUnderCeiling(
            jobs,
            plannedWidth,
            (job) => job.width,
            gpus,
            (job) => epochSpeedups(classes.get(job.className)?.profile, job.statEpoch),
            (job) => now - job.submittedAt >= longWaitMs,
            (job) => classes.get(job.className)?.profile.weight ?? 1,
            order === 'least-work-left'
              ? {
                  workLeftOf: (job) =>
                    weightedWorkLeft(classes.get(job.className)?.profile, job.statEpoch, job.workDoneSeconds),
                  overdue: (job) => now - job.submittedAt >= overdueHours * HOUR,
                }
              : undefined,
          );
          const widthOf = budgetLimitedWidths(jobs, gpus, classes, now, longWaitMs, {
            order,
            overdueMs: overdueHours * HOUR,
          });
          expect(jobs.map(widthOf)).toEqual(jobs.map((job) => expected.get(job) ?? 0));
          for (const job of jobs)
            expect(job.queuedForBudget).toBe(!expected.has(job) && plannedWidth(job) > 0);
          // The waiting jobs queued are numbered 1..n, none twice (a running one left out stops first).
          const places = jobs
            .filter((job) => job.queuedForBudget && job.state === 'waiting')
            .map((job) => job.budgetQueuePlace);
          expect([...places].sort((x, y) => x! - y!)).toEqual(places.map((_, i) => i + 1));
          // Out of order (a caller other than placement and the drain), and a job it was not given.
          const shuffled = [...jobs].sort(
            (x, y) => ((x.id * 7919 + seed) % 101) - ((y.id * 7919 + seed) % 101),
          );
          for (const job of shuffled) expect(widthOf(job)).toBe(expected.get(job) ?? 0);
          // In order with jobs skipped (the idle fill asks only of the jobs placed), twice over: the
          // second pass starts behind where the first left off.
          const some = jobs.filter((job) => (job.id * 31 + seed) % 3 !== 0);
          for (const job of [...some, ...some]) expect(widthOf(job)).toBe(expected.get(job) ?? 0);
          // A job not among them waits under a binding ceiling, as the map has it.
          if (widthOf !== plannedWidth && jobs.length > 0)
            expect(widthOf({ ...jobs[0] } as ServiceJob)).toBe(0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
