import { describe, expect, it } from 'vitest';
import { belowBudget, usableExtraGpus } from '../../src/core/below-budget.ts';

// Speedup per width: 2 GPUs add 0.9, 4 add 0.8 more per GPU, 8 only 0.2 per GPU; 16 dips back up.
const SPEEDUP = { '1': 1, '2': 1.9, '4': 3.5, '8': 4.3, '16': 8 };

describe('usable extra GPUs', () => {
  it('reads a job on a width where its speedup dips at that lower speed', () => {
    // 5 GPUs run at 2.0x, below 4's 3.6x: 8 GPUs (5.0x) add 1.0 per GPU from where the job is.
    expect(usableExtraGpus({ '1': 1, '4': 3.6, '5': 2, '8': 5 }, 5, 0.5)).toBe(3);
  });

  it('climbs listed widths while each step adds at least the floor per GPU', () => {
    expect(usableExtraGpus(SPEEDUP, 1, 0.5)).toBe(3);
    expect(usableExtraGpus(SPEEDUP, 2, 0.5)).toBe(2);
    expect(usableExtraGpus(SPEEDUP, 1, 0.85)).toBe(1);
    expect(usableExtraGpus(SPEEDUP, 1, 0.95)).toBe(0);
  });

  it('skips a dip when a wider width is worth its GPUs from here', () => {
    // From 4 (3.5): 8 adds 0.2 per GPU, but 16 adds (8 - 3.5) / 12 = 0.375 per GPU.
    expect(usableExtraGpus(SPEEDUP, 4, 0.3)).toBe(12);
    expect(usableExtraGpus(SPEEDUP, 4, 0.5)).toBe(0);
  });
});

describe('the GPUs below the budget at an instant', () => {
  const at = (paidGpus: number, allocatedGpus: number, usableGpus: number, anyWaiting = false) =>
    belowBudget({ budgetGpus: 40, paidGpus, allocatedGpus, anyWaiting, usableGpus });

  it('are all for the waiting jobs while one waits', () => {
    expect(at(24, 20, 8, true)).toEqual({ gpus: 16, waitingGpus: 16, usableGpus: 0, unusableGpus: 0 });
  });

  it('are usable as far as running jobs can take them beyond the idle GPUs paid, the rest unusable', () => {
    // 4 idle GPUs paid serve the first 4 of the 10 usable: 6 usable, 10 nothing can use.
    expect(at(24, 20, 10)).toEqual({ gpus: 16, waitingGpus: 0, usableGpus: 6, unusableGpus: 10 });
    // More usable than the gap: all of it usable.
    expect(at(24, 24, 30)).toEqual({ gpus: 16, waitingGpus: 0, usableGpus: 16, unusableGpus: 0 });
  });

  it('are none at or above the budget', () => {
    expect(at(48, 40, 10)).toEqual({ gpus: 0, waitingGpus: 0, usableGpus: 0, unusableGpus: 0 });
  });
});
