/**
 * A budget operator's trial: after a deep cut GET /v1/budget showed the window's paid average above
 * its budget and did not say when it would be back within it. Now `window.backWithinBudget` says when,
 * if the GPUs paid now stay paid: read from the ledger as the window's average is, it is the minute
 * the average comes within (the clock here moves by 60 s ticks).
 */
import { afterEach, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

interface Window {
  paidGpuHoursPerHour: number;
  budgetGpuHoursPerHour: number;
  backWithinBudget: { at: string | null; paidGpusNow: number } | null;
}

it('says when the window is back within its budget after a deep cut, and nothing once within', async () => {
  // Nodes paid for half an hour after they are let go: the cut leaves them paid over the new budget.
  const s = await startService({
    config: { priorRates: { cifar10: 6 }, local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 1800 } },
  });
  cleanups.push(s.close);
  const window = async () => (await s.request('GET', '/v1/budget')).body.window as Window;
  expect((await window()).backWithinBudget).toBeNull();
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  for (let i = 0; i < 5; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10' });
  await s.ticks(20);
  // 44 paid (the ceiling's slack) against 40: over, and not at this rate.
  const burst = await window();
  expect(burst.paidGpuHoursPerHour).toBeGreaterThan(burst.budgetGpuHoursPerHour);
  expect(burst.backWithinBudget).toEqual({ at: null, paidGpusNow: 44 });

  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 });
  await s.ticks(40);
  const cut = await window();
  expect(cut.paidGpuHoursPerHour).toBeGreaterThan(cut.budgetGpuHoursPerHour);
  expect(cut.backWithinBudget?.paidGpusNow).toBe(0);
  const at = Date.parse(cut.backWithinBudget?.at ?? '');
  expect(at).toBeGreaterThan(s.clock.t + 3_600_000);
  // Nothing changes the rate: over until the minute before, within at it.
  await s.ticks((at - s.clock.t) / 60_000 - 1);
  const before = await window();
  expect(before.paidGpuHoursPerHour).toBeGreaterThan(before.budgetGpuHoursPerHour);
  expect(before.backWithinBudget?.at).toBe(cut.backWithinBudget?.at);
  await s.ticks(1);
  expect(s.clock.t).toBe(at);
  const within = await window();
  expect(within.paidGpuHoursPerHour).toBeLessThanOrEqual(within.budgetGpuHoursPerHour);
  expect(within.backWithinBudget).toBeNull();
});
