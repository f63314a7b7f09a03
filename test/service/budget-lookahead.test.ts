/**
 * The service's spend ceiling looks ahead (budgetLookaheadHours; unset, three horizons): room saved in
 * a lull and spent in the burst after it is owed back when the lull leaves the 24-hour window, and the
 * ceiling starts paying it back as soon as a window ending within the look-ahead would be over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** Paid at a budget of 40: 3 h at it, a 3-hour lull (120 GPU-hours of room), 3 h at twice it, then at it. */
async function ceilingAfterALullSpent(config: Record<string, unknown> = {}) {
  const s = await startService({ config });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
  const nodes = (count: number, tag: string) =>
    Array.from({ length: count }, (_, i) => ({ id: `${tag}-${i}`, gpus: 4, launchedAt: s.clock.t }));
  const hold = (count: number, tag: string, hours: number) => {
    s.repo.ledger.observeNodes(nodes(count, tag), s.clock.t);
    s.clock.t += hours * HOUR;
  };
  hold(10, 'a', 3);
  hold(0, 'lull', 3);
  hold(20, 'burst', 3);
  // 25.5 hours in: the lull (hours 3-6) leaves the window between 1.5 and 4.5 hours from now.
  hold(10, 'b', 16.5);
  s.repo.ledger.observeNodes(nodes(10, 'b'), s.clock.t);
  return (await s.request('GET', '/v1/budget')).body.control;
}

describe('the spend ceiling, looking ahead', () => {
  it('pays back over three hours what a window ending within them will owe', async () => {
    const control = await ceilingAfterALullSpent();
    expect(control.lookaheadHours).toBe(3);
    // The window ending 3 hours from now has lost 1.5 hours of the lull and still holds the burst: its
    // last 21 hours so far paid 40 x 21 + 120 (the burst) - 60 (the lull's 1.5 hours left in it), and
    // the next 3 may add only what 40 x (24 + 0.1 x 1) leaves.
    const paidInItsPast = 40 * 21 + 120 - 60;
    expect(control.ceilingGpus).toBeCloseTo((40 * 24.1 - paidInItsPast) / 3, 1);
  });

  it('with a one-hour look, sees nothing owed until the lull starts to leave', async () => {
    const control = await ceilingAfterALullSpent({ budgetLookaheadHours: 1 });
    expect(control.lookaheadHours).toBe(1);
    expect(control.ceilingGpus).toBeCloseTo(44, 1);
  });
});
