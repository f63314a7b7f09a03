/**
 * The drain (src/service/drain.ts): once nothing has been submitted for `drainAfterHours` and every
 * job runs at its width, the running jobs take the GPUs the budget allows, whole nodes within it; a
 * submission ends it. Off with `drainAfterHours: 0`. The opt-in fill (`fillBelowBand`) does the same
 * while the budget window pays more than the band under the budget.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const BUDGET = 40;

/** Two imagenet jobs (tens of GPU-hours each) at budget 40, 10-minute ticks. */
async function twoLongJobs(config: Record<string, unknown> = {}) {
  const s = await startService({
    config: {
      tickSeconds: 600,
      priorRates: { imagenet: 0.5, cifar10: 1 },
      // The jobs here never poll: no lease runs out.
      leaseSeconds: 86_400,
      local: { maxNodes: 64, bootSeconds: 90, releaseSeconds: 30 },
      // No credit: the load needs more than the budget, and the credit would widen the cheapest plan
      // over the budget the window saved (test/service/credit.test.ts), leaving the drain no room.
      creditSpendHours: 0,
      ...config,
    },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: BUDGET })).status).toBe(200);
  await s.service.planner.idle();
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) ids.push((await s.request('POST', '/v1/jobs', { class: 'imagenet' })).body.id);
  const widths = async () => {
    const out: number[] = [];
    for (const id of ids) out.push((await s.request('GET', `/v1/jobs/${id}`)).body.width as number);
    return out;
  };
  return { s, widths };
}

const gpusOf = (s: Awaited<ReturnType<typeof twoLongJobs>>['s']) =>
  s.service.state.nodes.reduce((sum, n) => sum + n.gpus, 0);

describe('the drain', () => {
  it('hands the running jobs the budget once nothing was submitted for 2 hours, and a submission ends it', async () => {
    const { s, widths } = await twoLongJobs();
    await s.ticks(2);
    const planned = await widths();
    expect(planned.every((w) => w > 0)).toBe(true);
    // Room for the drain to hand out: the plan's widths leave most of the budget unspent.
    expect(planned[0]! + planned[1]!).toBeLessThanOrEqual(BUDGET / 2);
    let status = (await s.request('GET', '/v1/budget')).body;
    expect(status.control.draining).toBe(false);

    // Under 2 hours since the last submission: still the plan's widths.
    await s.ticks(8);
    expect(await widths()).toEqual(planned);

    await s.ticks(6);
    const drained = await widths();
    status = (await s.request('GET', '/v1/budget')).body;
    expect(status.control.draining).toBe(true);
    // Each job only ever grows, and together they hold more than the plan gave them, within the budget.
    expect(drained[0]!).toBeGreaterThanOrEqual(planned[0]!);
    expect(drained[1]!).toBeGreaterThanOrEqual(planned[1]!);
    expect(drained[0]! + drained[1]!).toBeGreaterThan(planned[0]! + planned[1]!);
    expect(drained[0]! + drained[1]!).toBeLessThanOrEqual(BUDGET);
    expect(gpusOf(s)).toBeLessThanOrEqual(BUDGET);
    expect((await s.request('GET', '/v1/status')).body.nodeGroup.desiredNodes).toBeLessThanOrEqual(
      BUDGET / 4,
    );

    // A submission ends the drain, and the new job runs on its plan.
    const late = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    await s.ticks(2);
    status = (await s.request('GET', '/v1/budget')).body;
    expect(status.control.draining).toBe(false);
    expect((await s.request('GET', `/v1/jobs/${late.id}`)).body.state).toBe('running');
  });

  it('counts the hours since the last submission across a restart (read from the store)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-drain-'));
    const clock = new ManualClock();
    const config = { tickSeconds: 600, leaseSeconds: 86_400, priorRates: { imagenet: 0.5 } };
    try {
      const first = await startService({ dataDir, clock, config });
      try {
        await first.request('PUT', '/v1/budget', { gpuHoursPerHour: BUDGET });
        await first.service.planner.idle();
        await first.request('POST', '/v1/jobs', { class: 'imagenet' });
        await first.ticks(2);
      } finally {
        await first.close();
      }
      // Down for 2 hours: the first tick after the restart finds the submission 2h20m old.
      clock.advance(2 * 3600);
      const second = await startService({ dataDir, clock, config });
      try {
        await second.ticks(1);
        expect((await second.request('GET', '/v1/budget')).body.control.draining).toBe(true);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses drainAfterHours below 0, naming the setting', async () => {
    await expect(startService({ config: { drainAfterHours: -1 } })).rejects.toThrow(
      /drainAfterHours must be >= 0 \(0: never\)/,
    );
  });

  it('never starts with drainAfterHours 0', async () => {
    const { s, widths } = await twoLongJobs({ drainAfterHours: 0 });
    await s.ticks(2);
    const planned = await widths();
    await s.ticks(20);
    expect(await widths()).toEqual(planned);
    expect((await s.request('GET', '/v1/budget')).body.control.draining).toBe(false);
  });
});

describe('the fill below the band (opt-in)', () => {
  it('hands the running jobs the budget once the window has counted 6 hours under the band; never with 0, the default', async () => {
    // The drain off, so only the fill can widen the jobs; the same service without the fill alongside
    // (its plan widens them too as budget goes unspent: the plan cap relaxes).
    const filling = await twoLongJobs({ drainAfterHours: 0, fillBelowBand: 0.015 });
    const plain = await twoLongJobs({ drainAfterHours: 0 });
    const both = async (ticks: number) => {
      await filling.s.ticks(ticks);
      await plain.s.ticks(ticks);
      return { filled: await filling.widths(), planned: await plain.widths() };
    };
    const sum = (widths: number[]) => widths.reduce((a, b) => a + b, 0);
    // Under 6 hours of window (36 ten-minute ticks): the plan's widths, though far under the budget.
    let now = await both(32);
    expect(now.filled).toEqual(now.planned);
    let budget = (await filling.s.request('GET', '/v1/budget')).body;
    expect(budget.control.fillingToBudget).toBe(false);
    expect(budget.control.debtGpuHours).toBeLessThan(-0.015 * BUDGET * 5);

    now = await both(6);
    budget = (await filling.s.request('GET', '/v1/budget')).body;
    expect(budget.control.fillingToBudget).toBe(true);
    expect(budget.control.draining).toBe(false);
    expect(now.filled[0]!).toBeGreaterThanOrEqual(now.planned[0]!);
    expect(now.filled[1]!).toBeGreaterThanOrEqual(now.planned[1]!);
    expect(sum(now.filled)).toBeGreaterThan(sum(now.planned));
    expect(sum(now.filled)).toBeLessThanOrEqual(BUDGET);
    expect(gpusOf(filling.s)).toBeLessThanOrEqual(BUDGET);
    expect((await plain.s.request('GET', '/v1/budget')).body.control.fillingToBudget).toBe(false);

    // A submission while the filled jobs hold the whole budget: the plan serves it first, every job on
    // its plan's width.
    expect(sum(now.filled)).toBe(BUDGET);
    const late = (await filling.s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    await filling.s.ticks(2);
    expect((await filling.s.request('GET', `/v1/jobs/${late.id}`)).body.state).toBe('running');
    expect(sum(await filling.widths())).toBeLessThan(BUDGET);
  });

  it('refuses a queue order it does not have, naming the setting and the orders it has', async () => {
    await expect(startService({ config: { queueOrder: 'shortest' } })).rejects.toThrow(
      /queueOrder must be one of least-work-left, submitted/,
    );
    await expect(startService({ config: { queueOverdueHours: 0 } })).rejects.toThrow(
      /queueOverdueHours must be > 0/,
    );
  });

  it('refuses a band outside [0, 1), naming the setting', async () => {
    await expect(startService({ config: { fillBelowBand: 1 } })).rejects.toThrow(
      /fillBelowBand must be a share of the budget from 0 \(never\) to below 1/,
    );
  });
});
