import { describe, expect, it } from 'vitest';
import { servedWithin, widthLevel } from '../../src/core/spend-ceiling.ts';

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
