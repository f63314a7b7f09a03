import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlowError, FlowNetwork } from '../../../../src/sim/policies/cuckoo/flow.ts';
import {
  type PlanGroup,
  planGroups,
  planOneWidth,
  slotCost,
} from '../../../../src/sim/policies/cuckoo/planning.ts';

/** The cheapest complete assignment of groups to (type, order) slots by trying every one. */
function enumerate(groups: readonly PlanGroup[], lanes: readonly number[]): number {
  const total = lanes.reduce((s, l) => s + l, 0);
  const orders = Math.ceil(groups.length / total);
  const avg = lanes.map((_, k) => groups.reduce((s, g) => s + (g.seconds[k] as number), 0) / groups.length);
  const room = new Map<string, number>();
  let best = Number.POSITIVE_INFINITY;
  const go = (i: number, acc: number) => {
    if (i === groups.length) {
      best = Math.min(best, acc);
      return;
    }
    const g = groups[i] as PlanGroup;
    lanes.forEach((l, k) => {
      for (let n = 1; n <= orders; n++) {
        const key = `${k}:${n}`;
        const used = room.get(key) ?? 0;
        if (used >= l) continue;
        room.set(key, used + 1);
        go(i + 1, acc + slotCost(g.seconds[k] as number, avg[k] as number, n, g.deadlineIn));
        room.set(key, used);
      }
    });
  };
  go(0, 0);
  return best;
}

function planCost(groups: readonly PlanGroup[], lanes: readonly number[]): number {
  const plan = planOneWidth(groups, lanes);
  const avg = lanes.map((_, k) => groups.reduce((s, g) => s + (g.seconds[k] as number), 0) / groups.length);
  const used = new Map<string, number>();
  return plan.reduce((s, slot, i) => {
    expect(slot.type).toBeGreaterThanOrEqual(0);
    const key = `${slot.type}:${slot.order}`;
    used.set(key, (used.get(key) ?? 0) + 1);
    expect(used.get(key)).toBeLessThanOrEqual(lanes[slot.type] as number);
    const g = groups[i] as PlanGroup;
    return s + slotCost(g.seconds[slot.type] as number, avg[slot.type] as number, slot.order, g.deadlineIn);
  }, 0);
}

describe('execution planning (CUCKOO section 3.3.3)', () => {
  // Table 5: two groups, GPU A and GPU B, deadlines 5.
  const table5: PlanGroup[] = [
    { width: 1, seconds: [2, 3], deadlineIn: 5 },
    { width: 1, seconds: [3, 4], deadlineIn: 5 },
  ];

  it("gives Table 6's edge weights", () => {
    const weights = table5.map((g) =>
      [
        [0, 1],
        [0, 2],
        [1, 1],
        [1, 2],
      ].map(([k, n]) =>
        slotCost(g.seconds[k as number] as number, k === 0 ? 2.5 : 3.5, n as number, g.deadlineIn),
      ),
    );
    expect(weights).toEqual([
      [2, 4.5, 3, 8],
      [3, 6, 4, 10],
    ]);
  });

  it('starts both Table 5 groups now, one per GPU, at the least total cost (6)', () => {
    const plan = planOneWidth(table5, [1, 1]);
    expect(plan.map((s) => s.order)).toEqual([1, 1]);
    expect(new Set(plan.map((s) => s.type)).size).toBe(2);
    expect(planCost(table5, [1, 1])).toBe(6);
  });

  it('is as cheap as the best assignment found by enumeration on random small instances', () => {
    const instance = fc.integer({ min: 1, max: 3 }).chain((types) =>
      fc.record({
        lanes: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: types, maxLength: types }),
        groups: fc.array(
          fc.record({
            width: fc.constant(1),
            seconds: fc.array(fc.integer({ min: 1, max: 20 }), { minLength: types, maxLength: types }),
            deadlineIn: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(Number.POSITIVE_INFINITY)),
          }),
          { minLength: 1, maxLength: 5 },
        ),
      }),
    );
    fc.assert(
      fc.property(instance, ({ lanes, groups }) => {
        expect(planCost(groups, lanes)).toBeCloseTo(enumerate(groups, lanes), 9);
      }),
      { numRuns: 200 },
    );
  });

  it('plans wider groups first and never starts more GPUs of a type than are free', () => {
    const groups: PlanGroup[] = [
      { width: 1, seconds: [5, 10], deadlineIn: Number.POSITIVE_INFINITY },
      { width: 4, seconds: [5, 10], deadlineIn: Number.POSITIVE_INFINITY },
      { width: 1, seconds: [5, 10], deadlineIn: Number.POSITIVE_INFINITY },
    ];
    const plan = planGroups(groups, [4, 2]);
    expect(plan[1]).toEqual({ type: 0, order: 1 });
    expect(plan[0]).toEqual({ type: 1, order: 1 });
    expect(plan[2]).toEqual({ type: 1, order: 1 });
    // A group no type has room for is not planned.
    expect(planGroups([{ width: 8, seconds: [1, 1], deadlineIn: 9 }], [4, 4])).toEqual([
      { type: -1, order: 0 },
    ]);
  });

  it('min-cost max-flow refuses malformed networks', () => {
    expect(() => new FlowNetwork(1)).toThrow(FlowError);
    const net = new FlowNetwork(2);
    expect(() => net.addArc(0, 2, 1, 0)).toThrow(/nodes 0..1/);
    expect(() => net.addArc(0, 1, 1.5, 0)).toThrow(/integers/);
    expect(() => net.addArc(0, 1, 1, Number.NaN)).toThrow(/finite/);
    net.addArc(0, 1, 3, 2);
    expect(net.minCostMaxFlow(0, 1)).toEqual({ flow: 3, cost: 6 });
  });
});
