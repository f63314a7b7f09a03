import { describe, expect, it } from 'vitest';
import { budgetLimitedWidths } from '../../src/service/budget-widths.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import type { ServiceState } from '../../src/service/state.ts';

const HOUR = 3_600_000;
// One concave speedup table (s(w) = w^0.75 to 32 GPUs): narrowing takes from the widest first.
const speedup = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [String(i + 1), (i + 1) ** 0.75]));
const classes = new Map([
  ['c', { profile: { name: 'c', epochs: [{ speedup }] } }],
  // Two epochs of an hour's work each on 1 GPU (the first narrowing leaves both at 1 GPU).
  [
    'two',
    {
      profile: {
        name: 'two',
        epochs: [
          { workSeconds: 3600, speedup: { 1: 1 } },
          { workSeconds: 3600, speedup: { 1: 1 } },
        ],
      },
    },
  ],
  // As 'two', weighted 4: its JCT counts four times, so its work left counts a quarter in the queue.
  [
    'heavy',
    {
      profile: {
        name: 'heavy',
        weight: 4,
        epochs: [
          { workSeconds: 3600, speedup: { 1: 1 } },
          { workSeconds: 3600, speedup: { 1: 1 } },
        ],
      },
    },
  ],
]) as unknown as ServiceState['classes'];

function job(id: number, state: 'running' | 'waiting', width: number, submittedAt: number): ServiceJob {
  return {
    id,
    className: 'c',
    state,
    widths: [16],
    statEpoch: 0,
    width,
    idleFillGpus: 0,
    submittedAt,
  } as unknown as ServiceJob;
}

describe('budgetLimitedWidths: the service under the spend ceiling', () => {
  it('keeps running widths while a job waits under keptWidthWaitMinutes, gives them up after it', () => {
    const now = 10 * HOUR;
    const running = [job(1, 'running', 16, 0), job(2, 'running', 16, 0)];
    // Narrowed widths 12 each under 36: the running jobs keep 16 (within twice 12), no room for 12 more.
    const recent = job(3, 'waiting', 0, now - HOUR + 60_000);
    const recentWidths = budgetLimitedWidths([...running, recent], 36, classes, now, HOUR);
    expect([...running, recent].map(recentWidths)).toEqual([16, 16, 0]);
    expect(recent.queuedForBudget).toBe(true);
    const long = job(3, 'waiting', 0, now - HOUR);
    const longWidths = budgetLimitedWidths([...running, long], 36, classes, now, HOUR);
    expect([...running, long].map(longWidths)).toEqual([12, 12, 12]);
    expect(long.queuedForBudget).toBe(false);
    // Each below its plan's 16 for the budget: said so (the API's narrowedBy), the waiting one too.
    expect([...running, long].map((j) => j.narrowedByBudget)).toEqual([true, true, true]);
    // Under a ceiling the plan fits: none is.
    budgetLimitedWidths([...running, long], 48, classes, now, HOUR);
    expect([...running, long].map((j) => j.narrowedByBudget)).toEqual([false, false, false]);
    // keptWidthWaitMinutes 0: kept widths never make a job wait.
    const atOnce = budgetLimitedWidths([...running, recent], 36, classes, now, 0);
    expect([...running, recent].map(atOnce)).toEqual([12, 12, 12]);
  });

  it('serves the waiting jobs with the least expected work left first, the oldest first among equals', () => {
    const now = 10 * HOUR;
    const waiting = (id: number, statEpoch: number, workDoneSeconds: number, submittedAt: number) =>
      ({
        ...job(id, 'waiting', 0, submittedAt),
        className: 'two',
        widths: [1, 1],
        statEpoch,
        workDoneSeconds,
      }) as ServiceJob;
    // Left: 7200 s, 3600 s (its second epoch), 1800 s (half of it done), 3600 s again but younger.
    const jobs = [
      waiting(1, 0, 0, 0),
      waiting(2, 1, 0, HOUR),
      waiting(3, 1, 1800, 2 * HOUR),
      waiting(4, 1, 0, 3 * HOUR),
    ];
    const widthOf = budgetLimitedWidths(jobs, 2, classes, now, HOUR);
    expect(jobs.map(widthOf)).toEqual([0, 1, 1, 0]);
    expect(jobs.map((j) => j.queuedForBudget)).toEqual([true, false, false, true]);
    // Room for one more: the younger job with an hour left, still before the oldest with two.
    const three = budgetLimitedWidths(jobs, 3, classes, now, HOUR);
    expect(jobs.map(three)).toEqual([0, 1, 1, 1]);
    // Waiting past the bound (24 hours by default), the longest job goes first.
    const overdue = budgetLimitedWidths(jobs, 1, classes, 0 + 24 * HOUR, HOUR);
    expect(jobs.map(overdue)).toEqual([1, 0, 0, 0]);
    // In submission order when asked: the oldest first, whatever it has left.
    const submitted = budgetLimitedWidths(jobs, 2, classes, now, HOUR, {
      order: 'submitted',
      overdueMs: HOUR,
    });
    expect(jobs.map(submitted)).toEqual([1, 1, 0, 0]);
  });

  it("orders the queue by work left over the class's weight (Smith's rule)", () => {
    const now = 10 * HOUR;
    const waiting = (id: number, className: string, statEpoch: number) =>
      ({
        ...job(id, 'waiting', 0, id * HOUR),
        className,
        widths: [1, 1],
        statEpoch,
        workDoneSeconds: 0,
      }) as ServiceJob;
    // 3600 s left (weight 1), 7200 s left (weight 4: 1800 s a unit of weight), 7200 s (weight 1).
    const jobs = [waiting(1, 'two', 1), waiting(2, 'heavy', 0), waiting(3, 'two', 0)];
    const widthOf = budgetLimitedWidths(jobs, 1, classes, now, HOUR);
    expect(jobs.map(widthOf)).toEqual([0, 1, 0]);
    expect(jobs.map((j) => j.budgetQueuePlace)).toEqual([1, undefined, 2]);
  });
});
