/**
 * The paper's calculator (solver: paper) on a long profile the validation allows (130 statistical
 * epochs, each with widths 1 to 1024): its relaxed problem passed every hull threshold, 133,000 of
 * them, as arguments to one call, which overflowed the stack. Every plan then failed with "Maximum call
 * stack size exceeded" until the class was removed.
 */
import { describe, expect, it } from 'vitest';
import { makeRelaxedItem, relaxedMinimumBudget, solveRelaxed } from '../../../src/core/calc/paper/relaxed.ts';

const WIDTHS = Array.from({ length: 1024 }, (_, i) => i + 1);
/** Concave throughout: every width is a hull vertex, so each epoch brings 1023 thresholds. */
const SPEEDUPS = WIDTHS.map((w) => Math.sqrt(w));

describe("the paper's relaxed problem on a long profile", () => {
  it('solves 130 epochs of 1024 widths each', () => {
    const items = Array.from({ length: 130 }, () => makeRelaxedItem(WIDTHS, SPEEDUPS, 1, 1, 1));
    expect(items.reduce((n, item) => n + item.thresholds.length, 0)).toBeGreaterThan(130_000);
    const budget = 2 * relaxedMinimumBudget(items);
    const { widths } = solveRelaxed(items, budget);
    expect(widths).toHaveLength(130);
    // Above the minimum, every item moved off its cheapest width (1 GPU), none past the widest.
    for (const width of widths) {
      expect(width).toBeGreaterThan(1);
      expect(width).toBeLessThanOrEqual(1024);
    }
  }, 60_000);
});
