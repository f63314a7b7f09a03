import { describe, expect, it } from 'vitest';
import { labelOf, QUEUE_THRESHOLDS, queueOf } from '../../../../src/sim/policies/cornucopia/queues.ts';
import { CLASSES } from './fakes.ts';

const profile = (name: string) => CLASSES.find((c) => c.name === name) ?? CLASSES[0]!;

describe('labelOf', () => {
  it('labels a class interactive when its job takes at most 2 hours on one GPU', () => {
    expect(labelOf(profile('short'))).toBe('interactive'); // 10 minutes
    expect(labelOf(profile('flat'))).toBe('interactive'); // 1 hour
    expect(labelOf(profile('long'))).toBe('batch'); // 6 hours
  });
});

describe('queueOf', () => {
  it('demotes by attained GPU service: Q1 from 1 GPU-hour, Q2 from 10', () => {
    expect(QUEUE_THRESHOLDS).toEqual([3600, 36_000]);
    expect(queueOf('interactive', 0)).toBe(0);
    expect(queueOf('interactive', 3599)).toBe(0);
    expect(queueOf('interactive', 3600)).toBe(1);
    expect(queueOf('interactive', 35_999)).toBe(1);
    expect(queueOf('interactive', 36_000)).toBe(2);
  });

  it('starts batch jobs in the middle queue, and only ever demotes them', () => {
    expect(queueOf('batch', 0)).toBe(1);
    expect(queueOf('batch', 3600)).toBe(1);
    expect(queueOf('batch', 40_000)).toBe(2);
    expect(queueOf('batch', 100, [50, 200])).toBe(1);
    expect(queueOf('interactive', 100, [50, 200])).toBe(1);
  });
});
