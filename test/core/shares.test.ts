import { describe, expect, it } from 'vitest';
import { drawForId, followedWidths, nextDraw, relocks, widthsFor } from '../../src/core/shares.ts';

describe('draws: which share of a mixture a job runs', () => {
  it('starts each class at a fixed point of its own and steps by the golden ratio', () => {
    expect(nextDraw(undefined, 'cifar10')).toBe(nextDraw(undefined, 'cifar10'));
    expect(nextDraw(undefined, 'cifar10')).not.toBe(nextDraw(undefined, 'bert'));
    for (const name of ['a', 'cifar10', 'deepspeech2']) {
      const u = nextDraw(undefined, name);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
    }
    expect(nextDraw(0.5, 'x')).toBeCloseTo(0.5 + (Math.sqrt(5) - 1) / 2 - 1, 12);
  });

  it('splits the jobs of a class in the mixture shares from the first few jobs on', () => {
    const plan = {
      a: [
        { share: 0.3, widths: [1] },
        { share: 0.7, widths: [4] },
      ],
    };
    let u: number | undefined;
    let narrow = 0;
    for (let n = 1; n <= 40; n++) {
      u = nextDraw(u, 'a');
      if (widthsFor(plan, 'a', u)?.[0] === 1) narrow += 1;
      // Within two jobs of 30% at every count (a random draw wanders by sqrt(n) jobs).
      expect(Math.abs(narrow - 0.3 * n)).toBeLessThanOrEqual(2);
    }
  });
});

describe('followedWidths: a started job under a newer plan', () => {
  it('takes the plan for its later epochs and keeps its current width unless moved 2x', () => {
    expect(followedWidths([16, 16, 16], [4, 11, 11], 1)).toEqual([16, 11, 16]);
    // Moved 2x or more, up or down: the current epoch follows too (one restart).
    expect(followedWidths([16, 22, 16], [4, 11, 11], 1)).toEqual([16, 22, 16]);
    expect(followedWidths([1, 4, 4], [4, 8, 8], 1)).toEqual([1, 4, 4]);
    expect(followedWidths([1, 5, 4], [4, 8, 8], 1)).toEqual([1, 8, 4]);
    // Past the last epoch the last width counts.
    expect(followedWidths([2, 3], [2, 4], 5)).toEqual([2, 4]);
  });

  it('relocks at a move of the factor or more, either way (the simulator passes its own factor)', () => {
    expect([relocks(8, 4), relocks(7, 4), relocks(2, 4), relocks(3, 4)]).toEqual([true, false, true, false]);
    expect([relocks(6, 4, 1.5), relocks(5, 4, 1.5)]).toEqual([true, false]);
  });

  it('gives jobs stored before draws one from their id, in [0, 1)', () => {
    const draws = [1, 2, 3, 1000].map(drawForId);
    for (const u of draws) expect(u >= 0 && u < 1).toBe(true);
    expect(new Set(draws).size).toBe(4);
  });
});
