/**
 * pollux-budget's controller (src/sim/policies/pollux/budget.ts): c follows the spend error, holds the
 * time average, and a lull's unspent budget is not banked for a burst to spend at a tiny c.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLLUX_BUDGET, TargetController } from '../../../../src/sim/policies/pollux/budget.ts';
import { clusterView, nodes } from '../fakes.ts';

/** Ticks of `seconds` each with `gpus` rented (4 a node), from `from`; returns the last target. */
function run(controller: TargetController, from: number, ticks: number, gpus: number, seconds = 60): number {
  let target = controller.target;
  for (let i = 1; i <= ticks; i++)
    target = controller.update(clusterView(nodes(gpus / 4), { now: from + i * seconds }));
  return target;
}

describe('pollux-budget target controller', () => {
  it('raises c while it rents more than the budget and lowers it while less, within its bounds', () => {
    const over = new TargetController(40);
    expect(run(over, 0, 60, 80)).toBeGreaterThan(0.5);
    const under = new TargetController(40);
    expect(run(under, 0, 60, 20)).toBeLessThan(0.5);
    expect(run(under, 3600, 24 * 60, 0)).toBeCloseTo(DEFAULT_POLLUX_BUDGET.minTarget, 9);
    expect(run(over, 3600, 24 * 60, 400)).toBeCloseTo(DEFAULT_POLLUX_BUDGET.maxTarget, 9);
  });

  it('banks no lull: after 6 hours with nothing rented, renting twice the budget raises c at once', () => {
    const controller = new TargetController(40);
    run(controller, 0, 6 * 60, 0);
    const afterLull = controller.target;
    const tenMinutes = run(controller, 6 * 3600, 10, 80);
    expect(tenMinutes).toBeGreaterThan(afterLull);
  });

  it('holds the time average: c settles where the rent equals the budget', () => {
    // A cluster that rents more the lower c is (as the autoscaler does): 80 GPUs at c = 0.2, 20 at 0.8.
    const controller = new TargetController(40);
    let rented = 0;
    let seconds = 0;
    for (let i = 1; i <= 48 * 60; i++) {
      const gpus = 4 * Math.round((100 - 100 * controller.target) / 4);
      controller.update(clusterView(nodes(gpus / 4), { now: i * 60 }));
      if (i > 24 * 60) {
        rented += gpus * 60;
        seconds += 60;
      }
    }
    expect(rented / seconds).toBeGreaterThan(38);
    expect(rented / seconds).toBeLessThan(42);
  });
});
