import { describe, expect, it } from 'vitest';
import { ceilingWidths, widthsUnderCeiling } from '../../src/core/ceiling-widths.ts';

/** The jobs served at widths no table can narrow: what fits, in priority order. */
const servedWithin = <J extends { state: string }>(jobs: J[], widthOf: (j: J) => number, gpus: number) =>
  widthsUnderCeiling(
    jobs,
    widthOf,
    (j) => (j.state === 'running' ? widthOf(j) : 0),
    gpus,
    () => undefined,
  );

describe('widths no table can narrow: what fits, running jobs first, then the oldest', () => {
  it('serves the wide running job and queues the others behind it', () => {
    const jobs = [
      { id: 1, state: 'running', width: 32 },
      { id: 2, state: 'waiting', width: 16 },
      { id: 3, state: 'waiting', width: 16 },
    ];
    expect([...servedWithin(jobs, (j) => j.width, 40).keys()].map((j) => j.id)).toEqual([1]);
    // A smaller job behind a wider one may start (backfill).
    const backfill = [...jobs, { id: 4, state: 'waiting', width: 8 }];
    expect([...servedWithin(backfill, (j) => j.width, 40).keys()].map((j) => j.id)).toEqual([1, 4]);
  });

  it("serves no more than the ceiling's whole GPUs, a fraction of one left unpaid", () => {
    const jobs = [
      { id: 1, state: 'waiting', width: 6 },
      { id: 2, state: 'waiting', width: 5 },
    ];
    for (const gpus of [10, 10.5]) {
      const served = servedWithin(jobs, (j) => j.width, gpus);
      expect([...served.keys()].map((j) => j.id)).toEqual([1]);
      expect([...served.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(gpus);
    }
  });

  it('serves a job wider than the whole ceiling at the ceiling, so it does not wait for ever', () => {
    const wide = [{ id: 1, state: 'waiting', width: 16 }];
    expect([...servedWithin(wide, (j) => j.width, 10.5).values()]).toEqual([10]);
  });

  it('doubles a running job only within its plan', () => {
    // Planned 7 on 4 GPUs: twice 4 is past the plan, so it keeps 4 with 5 GPUs free.
    const jobs = [
      { id: 1, state: 'running', planned: 7, current: 4 },
      { id: 2, state: 'running', planned: 14, current: 11 },
    ];
    const widths = widthsUnderCeiling(
      jobs,
      (j) => j.planned,
      (j) => j.current,
      20,
      () => undefined,
    );
    expect(jobs.map((j) => widths.get(j))).toEqual([4, 11]);
  });
});

describe('widthsUnderCeiling: the rule the service and the simulator share', () => {
  const job = (id: number, state: string, planned: number, current: number) => ({
    id,
    state,
    planned,
    current,
  });
  // One concave table for every job (s(w) = w^0.75 at every width to 32): narrowing by price then
  // takes from the widest first, as a common width would.
  const concave = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [String(i + 1), (i + 1) ** 0.75]));
  const under = (
    jobs: ReturnType<typeof job>[],
    gpus: number,
    waitedLong: (j: ReturnType<typeof job>) => boolean = () => false,
  ) =>
    widthsUnderCeiling(
      jobs,
      (j) => j.planned,
      (j) => j.current,
      gpus,
      () => concave,
      waitedLong,
    );

  it('keeps the plan when it fits', () => {
    const jobs = [job(1, 'running', 8, 8), job(2, 'waiting', 8, 0)];
    expect([...under(jobs, 20).values()]).toEqual([8, 8]);
  });

  it('lets a running job keep its plan width up to twice the level, narrowing the others to the level', () => {
    // Level 7 (7 x 3 = 21 fits in 22, 8 x 3 does not): the running 12 <= 14 keeps its width.
    const jobs = [job(1, 'running', 12, 12), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    const widths = under(jobs, 22);
    expect(widths.get(jobs[0] as ReturnType<typeof job>)).toBe(12);
    // What is left (10) serves one more job at the level; the last waits for the budget.
    expect(widths.get(jobs[1] as ReturnType<typeof job>)).toBe(7);
    expect(widths.has(jobs[2] as ReturnType<typeof job>)).toBe(false);
  });

  it('narrows widths running jobs keep once a waiting job has waited long for the budget', () => {
    const longWait = (j: ReturnType<typeof job>) => j.state === 'waiting';
    const withWait = (jobs: ReturnType<typeof job>[], gpus: number, waitedLong: typeof longWait) => {
      const widths = under(jobs, gpus, waitedLong);
      return jobs.map((j) => widths.get(j) ?? 0);
    };
    // Narrowed widths 12, 12, 12 under 36: the running jobs keep 16 (within twice 12), the waiting job
    // does not fit in the 4 left and waits, until it has waited long.
    const kept = [job(1, 'running', 16, 16), job(2, 'running', 16, 16), job(3, 'waiting', 16, 0)];
    expect(withWait(kept, 36, () => false)).toEqual([16, 16, 0]);
    expect(withWait(kept, 36, longWait)).toEqual([12, 12, 12]);
    // A running job at or below its narrowed width is not what keeps the waiting job out: the one on
    // 12 goes to its narrowed 9, the one on 8 keeps 8 (no restart).
    const mixed = [job(1, 'running', 12, 12), job(2, 'running', 12, 8), job(3, 'waiting', 12, 0)];
    expect(withWait(mixed, 26, () => false)).toEqual([12, 8, 0]);
    expect(withWait(mixed, 26, longWait)).toEqual([9, 8, 9]);
  });

  it('narrows a running job over twice its narrowed width', () => {
    const wide = [job(1, 'running', 32, 32), job(2, 'waiting', 16, 0), job(3, 'waiting', 16, 0)];
    // The widest steps are the cheapest: 32 comes down to 16, then all three to 13 or 14 (40). At an
    // equal price the waiting jobs step first, so the running job, restarted either way, keeps the 14th.
    expect([...under(wide, 40).values()]).toEqual([14, 13, 13]);
  });

  it('keeps a narrowed running job where it is until it may have twice its width', () => {
    // Narrowed widths 7, 7, 7 (21): the job running on 4 of its planned 12 would gain less than 2x, so
    // it keeps 4 (no restart); what that leaves (3) starts each waiting job one GPU wider, oldest first.
    const narrowed = [job(1, 'running', 12, 4), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(narrowed, 21).values()]).toEqual([4, 8, 8]);
    // At 22 the oldest waiting job's narrowed width is 8: it starts on 9.
    expect([...under(narrowed, 22).values()]).toEqual([4, 9, 8]);
    // Narrowed widths 9, 10, 9 (28): from 4, 9 is more than twice: it widens.
    expect([...under(narrowed, 28).values()]).toEqual([9, 10, 9]);
    // On 3 of a plan of 12, a narrowed width of 6 is twice: it widens too.
    const three = [job(1, 'running', 12, 3), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(three, 18).values()]).toEqual([6, 6, 6]);
  });

  it('narrows the job whose GPUs buy the least speed, not every job alike', () => {
    // bert's and yolov3's first epochs (data/profiles.json) to 4 GPUs, both planned at 4, 5 GPUs: yolov3's
    // 2nd to 4th GPUs add 0.74x, bert's 3.07x, so yolov3 runs on 1 and bert keeps 4.
    const bert = { '1': 1, '2': 2.056, '3': 3.034, '4': 4.074 };
    const yolov3 = { '1': 1, '2': 1.59, '4': 1.74 };
    const jobs = [
      { ...job(1, 'waiting', 4, 0), table: yolov3 },
      { ...job(2, 'waiting', 4, 0), table: bert },
    ];
    const widths = widthsUnderCeiling(
      jobs,
      (j) => j.planned,
      (j) => j.current,
      5,
      (j) => j.table,
    );
    expect([...widths.values()]).toEqual([1, 4]);
  });

  it('gives every job its plan once the plan fits, a narrowed one too', () => {
    const narrowed = [job(1, 'running', 12, 4), job(2, 'waiting', 8, 0)];
    expect([...under(narrowed, 20).values()]).toEqual([12, 8]);
  });

  it('uses the GPUs narrowing leaves: waiting jobs one wider, oldest first, then running ones doubled', () => {
    // 30 jobs planned at 16 under a ceiling of 46, 20 of them running on 1: the running ones step down to
    // 1 first (that restarts nothing), the six oldest stay at 2, and the waiting ones start on 2.
    const many = Array.from({ length: 30 }, (_, i) => job(i + 1, i < 20 ? 'running' : 'waiting', 16, 1));
    const widths = [...under(many, 46).values()];
    expect(widths.reduce((a, b) => a + b, 0)).toBe(46);
    expect(widths.slice(20)).toEqual(Array(10).fill(2));
    expect(widths.slice(0, 20)).toEqual([...Array(6).fill(2), ...Array(14).fill(1)]);
    // Never past a job's plan, and never more than the ceiling.
    const small = [job(1, 'running', 2, 1), job(2, 'running', 1, 1), job(3, 'waiting', 2, 0)];
    expect([...under(small, 4.5).values()]).toEqual([1, 1, 2]);
    expect([...under(small, 3).values()]).toEqual([1, 1, 1]);
  });

  it('does not widen a running job by less than double: a restart costs more than it buys', () => {
    // Narrowed widths 6, 6, 6: from 5, less than double, so each keeps 5; the 3 GPUs left would not
    // double any of them.
    const running = [job(1, 'running', 12, 5), job(2, 'running', 12, 5), job(3, 'running', 12, 5)];
    expect([...under(running, 18).values()]).toEqual([5, 5, 5]);
  });

  it('doubles a running job only to a width its table lists: an unlisted one runs as the listed below', () => {
    const gapped = { '1': 1, '2': 1.9, '3': 2.7, '4': 3.5, '8': 6, '16': 10 };
    const on = (held: number, planned: number, gpus: number) =>
      widthsUnderCeiling(
        [job(1, 'running', planned, held)],
        (j) => j.planned,
        (j) => j.current,
        gpus,
        () => gapped,
      );
    // On 3, planned 16, 7 GPUs allowed: 6 is unlisted (it runs as 4), 8 does not fit: it keeps 3.
    expect([...on(3, 16, 7).values()]).toEqual([3]);
    // 9 allowed: 8, the narrowest listed width at least double.
    expect([...on(3, 16, 9).values()]).toEqual([8]);
  });

  it('narrows a job running wider than its new plan to that plan, and the others by price', () => {
    const replanned = [job(1, 'running', 4, 12), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(replanned, 16).values()]).toEqual([4, 6, 6]);
  });

  it('keeps no width above a new plan, even within twice the narrowed width', () => {
    // Running on 16, its plan now 13: narrowed by price to 11, it does not keep 16 (which would leave
    // the waiting job out), though 16 is within twice 11.
    const replanned = [job(1, 'waiting', 9, 0), job(2, 'running', 13, 16)];
    const widths = under(replanned, 20);
    expect(replanned.map((j) => widths.get(j) ?? 0)).toEqual([9, 11]);
  });

  it('keeps a running width that fills the ceiling exactly while no job has waited long', () => {
    // Narrowed to 4 of 7 GPUs, the job running on 7 keeps them: a restart to let in a job that has not
    // waited long is what the kept widths avoid.
    const jobs = [job(1, 'running', 11, 7), job(2, 'waiting', 8, 0)];
    const widths = under(jobs, 7);
    expect(jobs.map((j) => widths.get(j) ?? 0)).toEqual([7, 0]);
  });

  it('starts a waiting job one GPU wider with what narrowing leaves, never past its plan', () => {
    const jobs = [job(1, 'running', 6, 4), job(2, 'waiting', 3, 0), job(3, 'waiting', 9, 0)];
    const widths = under(jobs, 16);
    expect(jobs.map((j) => widths.get(j) ?? 0)).toEqual([4, 3, 8]);
  });

  it('gives every job its plan when the plans fill the ceiling exactly (the columns the service reads)', () => {
    // A running job on 4 of a plan of 6 goes to 6: the plans fit, nothing is narrowed or kept.
    const widths = ceilingWidths(
      { running: [true, false], planned: [6, 4], current: [4, 0], tables: [concave, concave] },
      10,
      () => false,
    );
    expect([...widths]).toEqual([6, 4]);
  });
});
