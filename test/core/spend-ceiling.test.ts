import { describe, expect, it } from 'vitest';
import { servedWithin, widthLevel, widthsUnderCeiling } from '../../src/core/spend-ceiling.ts';

describe('widthLevel: the common width cap under the ceiling', () => {
  it('leaves widths that fit alone (Infinity)', () => {
    expect(widthLevel([8, 8, 4], 20)).toBe(Number.POSITIVE_INFINITY);
    expect(widthLevel([], 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it('is the widest cap with which every job fits: narrow jobs keep their width, wide ones share the rest', () => {
    // 2 + 2 + 3 x 13 = 43 fits in 44; 3 x 14 would need 46.
    expect(widthLevel([32, 32, 32, 2, 2], 44)).toBe(13);
    const level = widthLevel([40, 24, 16, 1, 1, 1], 40);
    const total = (l: number) => [40, 24, 16, 1, 1, 1].reduce((s, w) => s + Math.min(w, l), 0);
    expect(total(level)).toBeLessThanOrEqual(40);
    expect(total(level + 1)).toBeGreaterThan(40);
  });

  it('is 1 when not even one GPU each fits, and ignores a fraction of a GPU', () => {
    expect(widthLevel([4, 4, 4, 4, 4], 3)).toBe(1);
    expect(widthLevel([4, 4], 7.99)).toBe(3);
  });

  it('with servedWithin, serves every job at the level instead of queueing behind wide ones', () => {
    const jobs = [
      { id: 1, state: 'running', width: 32 },
      { id: 2, state: 'waiting', width: 16 },
      { id: 3, state: 'waiting', width: 16 },
    ];
    // Alone the ceiling serves the wide running job and queues both others.
    expect([...servedWithin(jobs, (j) => j.width, 40).keys()].map((j) => j.id)).toEqual([1]);
    const level = widthLevel(
      jobs.map((j) => j.width),
      40,
    );
    const served = servedWithin(jobs, (j) => Math.min(j.width, level), 40);
    expect([...served.values()]).toEqual([13, 13, 13]);
  });
});

describe('widthsUnderCeiling: the rule the service and the simulator share', () => {
  const job = (id: number, state: string, planned: number, current: number) => ({
    id,
    state,
    planned,
    current,
  });
  const under = (jobs: ReturnType<typeof job>[], gpus: number) =>
    widthsUnderCeiling(
      jobs,
      (j) => j.planned,
      (j) => j.current,
      gpus,
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

  it('narrows a running job over twice the level', () => {
    const wide = [job(1, 'running', 32, 32), job(2, 'waiting', 16, 0), job(3, 'waiting', 16, 0)];
    // Level 13 (39 of 40): the GPU left over starts the oldest waiting job one wider.
    expect([...under(wide, 40).values()]).toEqual([13, 14, 13]);
  });

  it('keeps a narrowed running job where it is until the ceiling allows twice its width', () => {
    // Level 7: the job running on 4 of its planned 12 would gain less than 2x, so it keeps 4 (no
    // restart); the waiting ones take the level.
    // What that leaves (4) starts each waiting job one GPU wider; 2 more would not double the running one.
    const narrowed = [job(1, 'running', 12, 4), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(narrowed, 22).values()]).toEqual([4, 8, 8]);
    // Level 9 (9 x 3 = 27 fits in 28, 10 x 3 does not): from 4, 9 is more than twice: it widens (and the
    // GPU left starts the first waiting job on 10).
    expect([...under(narrowed, 28).values()]).toEqual([9, 10, 9]);
    // On 3 of a plan of 12, a level of 6 is twice: it widens too.
    const three = [job(1, 'running', 12, 3), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(three, 18).values()]).toEqual([6, 6, 6]);
  });

  it('gives every job its plan once the plan fits, a narrowed one too', () => {
    const narrowed = [job(1, 'running', 12, 4), job(2, 'waiting', 8, 0)];
    expect([...under(narrowed, 20).values()]).toEqual([12, 8]);
  });

  it('uses the GPUs the level leaves: waiting jobs one wider, oldest first, then running ones doubled', () => {
    // 30 jobs planned at 16 under a ceiling of 46: level 1 leaves 16 GPUs that the level alone never uses.
    const many = Array.from({ length: 30 }, (_, i) => job(i + 1, i < 20 ? 'running' : 'waiting', 16, 1));
    const widths = [...under(many, 46).values()];
    expect(widths.reduce((a, b) => a + b, 0)).toBe(46);
    // The ten waiting jobs take one more each; the six oldest running ones double (1 -> 2).
    expect(widths.slice(20)).toEqual(Array(10).fill(2));
    expect(widths.slice(0, 20)).toEqual([...Array(6).fill(2), ...Array(14).fill(1)]);
    // Never past a job's plan, and never more than the ceiling.
    const small = [job(1, 'running', 2, 1), job(2, 'running', 1, 1), job(3, 'waiting', 2, 0)];
    expect([...under(small, 4.5).values()]).toEqual([1, 1, 2]);
    expect([...under(small, 3).values()]).toEqual([1, 1, 1]);
  });

  it('does not widen a running job by less than double: a restart costs more than it buys', () => {
    // Level 5 (15 of 18) leaves 3: the jobs running on 5 would need 5 more each to double.
    const running = [job(1, 'running', 12, 5), job(2, 'running', 12, 5), job(3, 'running', 12, 5)];
    expect([...under(running, 18).values()]).toEqual([5, 5, 5]);
  });

  it('narrows a job running wider than its new plan to that plan, the others to the level', () => {
    const replanned = [job(1, 'running', 4, 12), job(2, 'waiting', 12, 0), job(3, 'waiting', 12, 0)];
    expect([...under(replanned, 16).values()]).toEqual([4, 6, 6]);
  });
});
