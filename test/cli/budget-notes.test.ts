/**
 * The notes `boa budget get` (and `boa status`) add while an option or the load shapes the plan:
 * warm-up, plan cap, credit, rate bound, first day, rise, demand ratio, drain and fill.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { started } from './budget-fixture.ts';
import { runCleanups } from './cleanups.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa budget', { timeout: 180_000 }, () => {
  it('says when the opt-in warm-up plans with part of the budget', async () => {
    const s = await started({ config: { priorRates: { cifar10: 8 }, warmupHours: 8 } });
    expect((await s.boa(['budget', 'set', '40'])).status).toBe(0);
    const table = await s.boa(['budget', 'get']);
    expect(table.stdout).toMatch(/^warm-up\s+planning with 50% of the budget, rising to all of it$/m);
  });

  it('says when the plan cap (a default) holds the plan below the budget, and not without it', async () => {
    const s = await started({ config: { priorRates: { cifar10: 8 } } });
    const plain = await started({ config: { priorRates: { cifar10: 8 }, planCapMultiple: 0 } });
    // The two services do not depend on each other: both set at once.
    const [setCapped, setPlain] = await Promise.all([
      s.boa(['budget', 'set', '400']),
      plain.boa(['budget', 'set', '400']),
    ]);
    expect(setCapped.status).toBe(0);
    expect(setPlain.status).toBe(0);
    const cap = (await s.request('GET', '/v1/budget')).body.control.planCapGpuHoursPerHour;
    expect(cap).toBeLessThan(400);
    const [table, plainTable] = await Promise.all([s.boa(['budget', 'get']), plain.boa(['budget', 'get'])]);
    expect(table.stdout).toMatch(
      new RegExp(`^plan cap\\s+plans use at most ${cap.toFixed(1)} GPU-hours/hour \\(planCapMultiple x`, 'm'),
    );
    expect(plainTable.stdout).not.toMatch(/^plan cap/m);
  });

  it("says when plans spend the window's credit because the load needs most of the budget", async () => {
    // A prior worth many hours keeps the load where it is while the clock moves on.
    const s = await started({ config: { priorRates: { cifar10: 8 }, priorWeightHours: 1000 } });
    expect((await s.boa(['budget', 'set', '400'])).status).toBe(0);
    const needs = (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour;
    expect((await s.boa(['budget', 'set', String(needs * 1.05)])).status).toBe(0);
    expect((await s.boa(['budget', 'get'])).stdout).not.toMatch(/^credit/m);
    s.clock.t += 2 * 3_600_000;
    const credit = (await s.request('GET', '/v1/budget')).body.control.creditGpuHoursPerHour;
    expect(credit).toBeGreaterThan(0);
    expect((await s.boa(['budget', 'get'])).stdout).toMatch(
      new RegExp(`^credit\\s+plans get ${credit.toFixed(1)} GPU-hours/hour more from budget unspent`, 'm'),
    );
  });

  it('says how much more load plans are made for under the opt-in confidence bound', async () => {
    const s = await started({ config: { priorRates: { cifar10: 8, bert: 1 }, rateConfidence: 2 } });
    const plain = await started({ config: { priorRates: { cifar10: 8 } } });
    // The two services do not depend on each other: both set at once.
    const [setBound, setPlain] = await Promise.all([
      s.boa(['budget', 'set', '400']),
      plain.boa(['budget', 'set', '400']),
    ]);
    expect(setBound.status).toBe(0);
    expect(setPlain.status).toBe(0);
    // Nothing seen yet: the prior's 2 hours stand for 18 arrivals.
    const factor = (await s.request('GET', '/v1/budget')).body.control.rateConfidenceFactor;
    expect(factor).toBeCloseTo(1 + 2 / Math.sqrt(18), 3);
    expect((await plain.request('GET', '/v1/budget')).body.control.rateConfidenceFactor).toBe(1);
    const [table, plainTable] = await Promise.all([s.boa(['budget', 'get']), plain.boa(['budget', 'get'])]);
    expect(table.stdout).toMatch(
      new RegExp(`^rate bound\\s+plans are made for ${factor.toFixed(2)}x the estimated load`, 'm'),
    );
    expect(plainTable.stdout).not.toMatch(/^rate bound/m);
  });

  it('says what the opt-in first-day arrivals add to every class, and that they end with the first day', async () => {
    const s = await started({ config: { firstDayArrivals: 2, leaseSeconds: 86_400 } });
    expect((await s.boa(['budget', 'set', '400'])).status).toBe(0);
    s.clock.t += 6 * 3_600_000;
    // Two arrivals over the prior's 2 hours and the 6 observed.
    const added = (await s.request('GET', '/v1/budget')).body.control.firstDayJobsPerHour;
    expect(added).toBeCloseTo(2 / 8, 4);
    // Every class is planned for, so none is planned at 0.
    expect((await s.request('GET', '/v1/budget')).body.control.rateWindow.plannedAtZero).toEqual([]);
    expect((await s.boa(['budget', 'get'])).stdout).toMatch(
      /^first day\s+every class without a prior rate is planned with 0\.25 more jobs\/hour \(firstDayArrivals\)/m,
    );
    s.clock.t += 18 * 3_600_000;
    expect((await s.request('GET', '/v1/budget')).body.control.firstDayJobsPerHour).toBe(0);
    expect((await s.boa(['budget', 'get'])).stdout).not.toMatch(/^first day/m);
  });

  it('names, through the first day, the classes plans give nothing because none of their jobs has come', async () => {
    const s = await started({ config: { priorRates: { bert: 1 }, leaseSeconds: 86_400 } });
    expect((await s.boa(['budget', 'set', '400'])).status).toBe(0);
    const known = ((await s.request('GET', '/v1/classes')).body.classes as Array<{ name: string }>)
      .map((c) => c.name)
      .sort();
    const window = async () => (await s.request('GET', '/v1/budget')).body.control.rateWindow;
    // bert has a configured prior: it is planned for before any of its jobs comes.
    expect((await window()).plannedAtZero).toEqual(known.filter((name) => name !== 'bert'));
    s.clock.t += 3 * 3_600_000;
    expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).status).toBe(201);
    const after = await window();
    expect(after.observedHours).toBeCloseTo(3, 2);
    expect(after.plannedAtZero).toEqual(known.filter((name) => name !== 'bert' && name !== 'cifar10'));
    expect((await s.boa(['budget', 'get'])).stdout).toMatch(
      new RegExp(
        `^rates\\s+3\\.0 of the rate window's 24 h observed; planned at 0 until one of their jobs comes: ${after.plannedAtZero.join(', ')} \\(boa history import`,
        'm',
      ),
    );
    // A full window: what is not in it is not a first day's gap; the line goes.
    s.clock.t += 21 * 3_600_000;
    expect((await window()).observedHours).toBe(24);
    expect((await s.boa(['budget', 'get'])).stdout).not.toMatch(/^rates/m);
  });

  it('says when plans follow a step up in submissions after a quiet day (rise detection)', async () => {
    const s = await started({ config: { leaseSeconds: 86_400 } });
    expect((await s.boa(['budget', 'set', '400'])).status).toBe(0);
    const submit = async (count: number, everyMs: number) => {
      for (let i = 0; i < count; i++) {
        s.clock.t += everyMs;
        expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).status).toBe(201);
      }
    };
    await submit(24, 3_600_000); // a day at 1 an hour
    expect((await s.request('GET', '/v1/budget')).body.control.rateRiseFactor).toBe(1);
    expect((await s.boa(['budget', 'get'])).stdout).not.toMatch(/^rate rise/m);
    await submit(16, 450_000); // then 2 hours at 8 an hour
    const factor = (await s.request('GET', '/v1/budget')).body.control.rateRiseFactor;
    // The window reads (22 + 16) / 26 an hour; the last 2 hours, close to 8.
    expect(factor).toBeGreaterThan(4);
    expect((await s.boa(['budget', 'get'])).stdout).toMatch(
      new RegExp(`^rate rise\\s+plans are made for ${factor.toFixed(2)}x the window's estimated load`, 'm'),
    );
  });

  it('says when the plan in force was narrowed by the opt-in demand ratio', async () => {
    const s = await started({ config: { demandHalfLifeHours: 2 } });
    expect((await s.boa(['budget', 'set', '40'])).status).toBe(0);
    await s.service.planner.idle();
    expect((await s.request('GET', '/v1/budget')).body.control.demandRatio).toBe(1);
    expect((await s.boa(['budget', 'get'])).stdout).not.toMatch(/^demand ratio/m);
    // Three hours at twice what the plans expected, then a plan.
    const start = s.clock.now();
    for (let h = 0; h < 3; h++)
      s.repo.ledger.recordAllocation(start + h * 3_600_000, start + (h + 1) * 3_600_000, 60, 30);
    s.clock.advance(3 * 3600);
    await s.service.planner.request('test');
    const ratio = (await s.request('GET', '/v1/budget')).body.control.demandRatio;
    expect(ratio).toBeGreaterThan(1.6);
    expect((await s.boa(['budget', 'get'])).stdout).toMatch(
      new RegExp(`^demand ratio\\s+the plan was made with the budget divided by ${ratio.toFixed(2)}`, 'm'),
    );
  });

  it('says when the drain hands the running jobs the budget', async () => {
    const s = await started({
      config: { tickSeconds: 600, leaseSeconds: 86_400, priorRates: { imagenet: 0.5 } },
    });
    expect((await s.boa(['budget', 'set', '40'])).status).toBe(0);
    await s.service.planner.idle();
    await s.request('POST', '/v1/jobs', { class: 'imagenet' });
    await s.ticks(2);
    // Each pair of reads changes nothing: at once.
    const [before, statusBefore] = await Promise.all([s.boa(['budget', 'get']), s.boa(['status'])]);
    expect(before.stdout).not.toMatch(/^drain/m);
    expect(statusBefore.stdout).not.toMatch(/draining/);
    await s.ticks(12); // 2 hours without a submission
    const [draining, statusDraining] = await Promise.all([s.boa(['budget', 'get']), s.boa(['status'])]);
    expect(draining.stdout).toMatch(
      /^drain\s+nothing submitted lately and nothing waits: the running jobs take the GPUs the budget allows$/m,
    );
    expect(statusDraining.stdout).toMatch(
      /^budget\s+40 GPU-hours\/hour; .*; draining: the running jobs take the budget$/m,
    );
  });

  it('says when the opt-in fill below the band hands the running jobs the budget', async () => {
    const s = await started({
      config: {
        tickSeconds: 600,
        leaseSeconds: 86_400,
        priorRates: { imagenet: 0.5 },
        drainAfterHours: 0,
        fillBelowBand: 0.015,
      },
    });
    expect((await s.boa(['budget', 'set', '40'])).status).toBe(0);
    await s.service.planner.idle();
    await s.request('POST', '/v1/jobs', { class: 'imagenet' });
    await s.ticks(2);
    // Each pair of reads changes nothing: at once.
    const [before, statusBefore] = await Promise.all([s.boa(['budget', 'get']), s.boa(['status'])]);
    expect(before.stdout).not.toMatch(/^fill/m);
    expect(statusBefore.stdout).not.toMatch(/filling/);
    // Hours later the window is far under the budget, and once nothing the plan runs takes it, the fill
    // does (when depends on how far the job got: a credit spent on it moves its epochs).
    let filling = false;
    for (let tick = 0; tick < 48 && !filling; tick++) {
      await s.ticks(1);
      filling = (await s.request('GET', '/v1/status')).body.budget.fillingToBudget;
    }
    expect(filling).toBe(true);
    const [statusFilling, fillingTable] = await Promise.all([s.boa(['status']), s.boa(['budget', 'get'])]);
    expect(statusFilling.stdout).toMatch(
      /^budget\s+40 GPU-hours\/hour; .*; filling: the window is under the budget, the running jobs take it$/m,
    );
    expect(fillingTable.stdout).toMatch(
      /^fill\s+the window paid more than fillBelowBand under the budget and nothing waits: the running jobs take the GPUs the budget allows$/m,
    );
  });
});
