import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignSlots, type SlotDemand } from '../../../../src/sim/policies/cuckoo/slots.ts';

const demand = (min: number, costs: number[]): SlotDemand => ({ min, cost: Float64Array.from(costs) });

/** Every width vector within the bounds and the slots; the least total cost. */
function bruteForce(demands: readonly SlotDemand[], slots: number): number {
  let best = Number.POSITIVE_INFINITY;
  const walk = (j: number, used: number, total: number) => {
    if (used > slots) return;
    if (j === demands.length) {
      best = Math.min(best, total);
      return;
    }
    const d = demands[j] as SlotDemand;
    for (let w = d.min; w < d.cost.length; w++) walk(j + 1, used + w, total + (d.cost[w] as number));
  };
  walk(0, 0, 0);
  return best;
}

const total = (demands: readonly SlotDemand[], widths: Int32Array) =>
  demands.reduce((sum, d, j) => sum + (d.cost[widths[j] as number] as number), 0);

/** A convex cost curve from `min` on: positive decreasing steps, then rises (a job may gain nothing). */
const convexDemand = fc
  .record({
    min: fc.integer({ min: 0, max: 2 }),
    start: fc.integer({ min: 0, max: 10_000 }),
    steps: fc.array(fc.integer({ min: -3000, max: 500 }), { minLength: 0, maxLength: 6 }),
  })
  .map(({ min, start, steps }) => {
    // Sorted steps are non-decreasing: the curve is convex.
    const sorted = [...steps].sort((a, b) => a - b);
    const cost = [start];
    for (const step of sorted) cost.push((cost[cost.length - 1] as number) + step);
    const padded = [...Array.from({ length: min }, () => Number.POSITIVE_INFINITY), ...cost];
    return demand(min, padded);
  });

describe('assignSlots (min-cost flow on the job-slot network)', () => {
  it('gives each next GPU to the job it helps most', () => {
    // Job 0 gains 100 then 10; job 1 gains 50 then 40; three slots: 0 gets 2 (100, then 10 loses to 40).
    const demands = [demand(0, [300, 200, 190]), demand(0, [500, 450, 410])];
    expect([...assignSlots(demands, 3)]).toEqual([1, 2]);
    expect([...assignSlots(demands, 4)]).toEqual([2, 2]);
    expect([...assignSlots(demands, 1)]).toEqual([1, 0]);
  });

  it('leaves slots free when no job gains, and honours minimums', () => {
    expect([...assignSlots([demand(1, [Infinity, 10, 10, 12])], 8)]).toEqual([1]);
    expect([...assignSlots([demand(2, [Infinity, Infinity, 5]), demand(1, [Infinity, 9, 1])], 3)]).toEqual([
      2, 1,
    ]);
    expect(() => assignSlots([demand(2, [9, 9, 9]), demand(2, [9, 9, 9])], 3)).toThrow(
      /need 4 GPUs but only 3/,
    );
  });

  it('matches brute force on small convex instances', () => {
    fc.assert(
      fc.property(
        fc.array(convexDemand, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 14 }),
        (demands, slots) => {
          const minimum = demands.reduce((sum, d) => sum + d.min, 0);
          fc.pre(minimum <= slots);
          const widths = assignSlots(demands, slots);
          const used = widths.reduce((sum, w) => sum + w, 0);
          expect(used).toBeLessThanOrEqual(slots);
          demands.forEach((d, j) => {
            expect(widths[j]).toBeGreaterThanOrEqual(d.min);
            expect(widths[j]).toBeLessThan(d.cost.length);
          });
          expect(total(demands, widths)).toBeCloseTo(bruteForce(demands, slots), 6);
        },
      ),
      { numRuns: 400 },
    );
  });
});
