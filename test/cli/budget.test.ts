import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderBudget } from '../../src/cli/commands/budget.ts';
import { renderStatus } from '../../src/cli/commands/status.ts';
import { GatedQueries } from '../service/gated-computer.ts';
import { hasScript, onTerminal, runBoa, startCliService, unusedPort } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started(options: Parameters<typeof startCliService>[0] = {}) {
  const s = await startCliService(options);
  cleanups.push(s.close);
  return s;
}

/** The budget the service holds, read over HTTP, not through the CLI. */
async function storedBudget(s: Awaited<ReturnType<typeof started>>) {
  return (await s.request('GET', '/v1/budget')).body.gpuHoursPerHour;
}

/**
 * A budget that is no number, refused by the service (the CLI sends it as written): what it must be,
 * with the smallest accepted one and the budget to try (the CLI's own refusal said "the service names
 * it" and left the range to guess: an operator trial).
 */
const BUDGET_KIND = (value: string) =>
  new RegExp(
    '^boa: gpuHoursPerHour must be a number of GPU-hours per hour of at least 4, the smallest accepted ' +
      'budget \\(the cheapest class needs at least 1 GPU, and boa pays whole nodes of 4 GPUs\\), ' +
      `got "${value}", a string \\(try: boa budget set 4\\)\n$`,
  );

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa budget', { timeout: 180_000 }, () => {
  it('sets 40 and reads it back as a table and as the API JSON', async () => {
    const s = await started();
    // With arrivals expected (a prior): another service, set and planned alongside this one's.
    const expecting = await started({ config: { priorRates: { cifar10: 2 } } });
    const setAndPlan = async (service: typeof s) => {
      const setRun = await service.boa(['budget', 'set', '40']);
      return [setRun, await service.boa(['plan'])] as const;
    };
    const [[set, plan], [setThere, planThere]] = await Promise.all([setAndPlan(s), setAndPlan(expecting)]);
    expect(set.stderr).toBe('');
    expect(set.status).toBe(0);
    expect(set.stdout).toMatch(/^budget set\s+40 GPU-hours\/hour/m);
    expect(await storedBudget(s)).toBe(40);
    // The minimum and the spend printed are the plan's, as `boa plan` shows them.
    const minimum = (out: string) => /minimum feasible\s+([\d.e-]+)/.exec(out)?.[1];
    // With no arrivals there is no load to need a minimum: said as frontier says it (a newcomer read
    // "0.0002 GPU-hours/hour" as one).
    expect(set.stdout).toMatch(/^minimum feasible\s+- \(no arrivals seen yet\)$/m);
    expect(plan.stdout).toMatch(/^minimum feasible\s+- \(no arrivals seen yet\)$/m);
    // No arrivals seen yet: what it expects to spend is next to nothing, said in words.
    expect(set.stdout).toMatch(
      /^plan\s+plan #\d+: no arrivals seen yet, so it expects to spend next to nothing/m,
    );
    // No "few jobs arrive" beside it: none has been seen to arrive (a trial).
    expect(set.stdout).not.toMatch(/^note/m);
    // With arrivals expected (a prior), the spend the plan predicts, as boa plan gives it.
    // With arrivals expected (2 an hour), whose widest widths spend a tenth of 40: said.
    expect(setThere.stdout).toMatch(/^note\s+few jobs arrive: even the widest useful widths spend less/m);
    expect(minimum(setThere.stdout)).toBeDefined();
    expect(minimum(setThere.stdout)).toBe(minimum(planThere.stdout));
    // Epoch columns counted from 1, as jobs list and jobs show count a job's statistical epoch.
    expect(planThere.stdout).toMatch(
      /^GPU widths by statistical epoch \(e1 = first, as jobs list counts\):$/m,
    );
    expect(planThere.stdout).toMatch(/^class\s+jobs\/h\s+share\s+e1\s+e2\b/m);
    const planned = /allocated ([\d.e-]+) GPU-hours\/hour/.exec(planThere.stdout)?.[1];
    expect(planned).toBeDefined();
    expect(setThere.stdout).toMatch(
      new RegExp(
        `^plan\\s+plan #\\d+ allocates ${planned} GPU-hours/hour at the current 2\\.00 jobs/hour`,
        'm',
      ),
    );

    // Two reads that change nothing: at once.
    const [table, json] = await Promise.all([s.boa(['budget', 'get']), s.boa(['budget', 'get', '--json'])]);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^budget\s+40 GPU-hours\/hour \(\$28,557\.60\/month\)$/m);
    // Each average beside the budget it is held to (the budgets in force over the window, each for its
    // hours; the budget since it was set).
    expect(table.stdout).toMatch(
      /^average over\s+hours\s+paid GPU-h\/h\s+allocated GPU-h\/h\s+budget GPU-h\/h$/m,
    );
    expect(table.stdout).toMatch(/^last 24 h\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+40\.00$/m);
    expect(table.stdout).toMatch(/^since set\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+40\.00$/m);
    expect(table.stdout).not.toMatch(/^warm-up/m);
    // No nodes yet and no job waits: the whole budget is below, and nothing present can use it.
    expect(table.stdout).toMatch(
      /^below budget\s+40\.0 GPUs fewer than the budget are paid for now: running jobs could use 0\.0 at half a GPU's speedup per GPU or better, no job present can use 40\.0$/m,
    );
    expect(table.stdout).toMatch(
      /^ceiling\s+\d+ nodes \([\d.]+ GPUs\) for the next 1 h keep the window's average within the budget, and every 24-hour window ending within 3 h$/m,
    );
    // The debt is over what the ceiling counts: the window as it will be one horizon (1 h) from now.
    expect(table.stdout).toMatch(
      /^debt\s+none \([\d.]+ GPU-hours under the budget in the window's last 23 h \(or since a budget was first set\)\)$/m,
    );
    // A service just started has no 24 hours to average: the rate is named by the time it covers.
    const covered = (await s.request('GET', '/v1/budget')).body.window.hours as number;
    expect(covered).toBeLessThan(1);
    expect(table.stdout).toMatch(
      new RegExp(
        `^paid \\$/month\\s+\\S+ at the rate of the last ${Math.max(1, Math.round(covered * 60))} min$`,
        'm',
      ),
    );

    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await s.request('GET', '/v1/budget')).body);
  });

  it('counts one node and one job in the singular, in budget get and status', async () => {
    const s = await started();
    await s.boa(['budget', 'set', '4']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    const one = { ...budget.control, ceilingNodes: 1, heartbeatHoldNodes: 1, queuedForBudget: 1 };
    const text = renderBudget({ ...budget, control: one });
    expect(text).toMatch(/^ceiling\s+1 node \(/m);
    expect(text).toMatch(/^held\s+at most 1 node: /m);
    expect(text).toMatch(/^queued\s+1 job waits for the budget \(least work left first\)$/m);
    const fifo = renderBudget({ ...budget, control: { ...one, queueOrder: 'submitted' } });
    expect(fifo).toMatch(/^queued\s+1 job waits for the budget \(oldest first\)$/m);
    // A credit that rounds to 0.0 is no credit line (found in a trial: "plans get 0.0 GPU-hours/hour
    // more"), one that does not is.
    expect(renderBudget({ ...budget, control: { ...one, creditGpuHoursPerHour: 0.026 } })).not.toMatch(
      /^credit/m,
    );
    expect(renderBudget({ ...budget, control: { ...one, creditGpuHoursPerHour: 0.05 } })).toMatch(
      /^credit\s+plans get 0\.1 GPU-hours\/hour more/m,
    );
    // A ceiling above what the node group can hold says so (found in a newcomer trial: 82 nodes of 64).
    const past = { ...one, ceilingNodes: 82, ceilingGpus: 330.1 };
    expect(renderBudget({ ...budget, maxGpus: 256, control: past })).toMatch(
      /^ceiling\s+82 nodes \(330\.1 GPUs\) for the next 1 h .*; the node group holds at most 256 GPUs$/m,
    );
    expect(renderBudget({ ...budget, maxGpus: 400, control: past })).not.toMatch(/holds at most/);
    // A budget above them: the dollars are the group's GPUs' (the service's), and said to be.
    const above = { ...budget, gpuHoursPerHour: 257, maxGpus: 256, dollarsPerMonth: 182768.64 };
    expect(renderBudget(above)).toMatch(
      /^budget\s+257 GPU-hours\/hour \(at most the node group's 256 GPUs can be paid: \$182,768\.64\/month\)$/m,
    );
    expect(renderBudget({ ...above, dollarsPerMonth: null })).toMatch(
      /^budget\s+257 GPU-hours\/hour \(at most the node group's 256 GPUs can be paid\)$/m,
    );
    expect(renderBudget({ ...above, maxGpus: 400 })).toMatch(
      /^budget\s+257 GPU-hours\/hour \(\$182,768\.64\/month\)$/m,
    );
    const two = renderBudget({ ...budget, control: { ...one, ceilingNodes: 2, queuedForBudget: 2 } });
    expect(two).toMatch(/^ceiling\s+2 nodes \(/m);
    expect(two).toMatch(/^queued\s+2 jobs wait for the budget/m);
    const status = (await s.request('GET', '/v1/status')).body;
    const at = '2026-11-30T12:00:00.000Z';
    const shown = renderStatus({
      ...status,
      nodeGroup: { ...status.nodeGroup, lastResize: { target: 1, status: 'requested', at } },
      budget: { ...status.budget, queuedForBudget: 1 },
    });
    expect(shown).toMatch(/^last resize\s+to 1 node, requested/m);
    expect(shown).toMatch(/; 1 job queued for the budget/m);
  });

  it("shows where the window's allocated GPU-hours went, by class, and nothing while none were", async () => {
    const s = await started();
    await s.boa(['budget', 'set', '40']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    expect(budget.window.allocatedByClass).toEqual([]);
    expect(renderBudget(budget)).not.toMatch(/^allocated in the last/m);
    const allocatedByClass = [
      { className: 'bert', gpuHours: 412.34, gpuHoursPerHour: 17.18, share: 0.6 },
      { className: null, gpuHours: 274.9, gpuHoursPerHour: 11.45, share: 0.4 },
      { className: 'cifar10', gpuHours: 0.04, gpuHoursPerHour: 0.59, share: 0.0001 },
    ];
    const text = renderBudget({ ...budget, window: { ...budget.window, hours: 24, allocatedByClass } });
    expect(text).toMatch(/^allocated in the last 24 h\s+GPU-hours\s+GPU-h\/h\s+share$/m);
    // A ledger younger than the window: the span the rows cover, not the window's (found in review).
    const young = renderBudget({ ...budget, window: { ...budget.window, hours: 3, allocatedByClass } });
    expect(young).toMatch(/^allocated in the 3\.0 h on record\s+GPU-hours/m);
    expect(text).toMatch(/^bert\s+412\.34\s+17\.18\s+60%$/m);
    expect(text).toMatch(/^\(before classes were kept\)\s+274\.90\s+11\.45\s+40%$/m);
    // One blank line between the tables, not two.
    expect(text).toMatch(/^since set .*\n\nallocated in the last 24 h/m);
    // A few minutes' GPU-hours are not shown as none.
    expect(text).toMatch(/^cifar10\s+0\.04\s+0\.59\s+0%$/m);
  });

  it("says when the window's paid average is back within its budget, or not at the current rate", async () => {
    const s = await started();
    await s.boa(['budget', 'set', '4']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    expect(budget.window.backWithinBudget).toBeNull();
    expect(renderBudget(budget)).not.toMatch(/^back within/m);
    const at = '2026-12-01T19:30:00.000Z';
    const back = { ...budget.window, backWithinBudget: { at, paidGpusNow: 0 } };
    expect(renderBudget({ ...budget, window: back })).toMatch(
      /^back within\s+the window's paid average is within its budget from 2026-12-01T19:30:00Z on, if paid stays at 0 GPUs, as now$/m,
    );
    const never = { ...budget.window, backWithinBudget: { at: null, paidGpusNow: 8 } };
    expect(renderBudget({ ...budget, window: never })).toMatch(
      /^back within\s+not at the current rate: 8 GPUs paid now, above the budget 4$/m,
    );
  });

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

  it('warns when the budget is below the load minimum; refuses one below a single job with exit 2', async () => {
    const s = await started({ config: { priorRates: { cifar10: 8 } } });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });

    const low = await s.boa(['budget', 'set', '5']);
    expect(low.status, low.stderr).toBe(0);
    expect(low.stdout).toMatch(/^warning\s+budget 5 is below [\d.]+ GPU-hours\/hour.*jobs will queue/m);
    expect(await storedBudget(s)).toBe(5);

    // Two refusals, which change nothing: at once.
    const [tooLow, lowJson] = await Promise.all([
      s.boa(['budget', 'set', '0.5']),
      s.boa(['--json', 'budget', 'set', '0.5']),
    ]);
    expect(tooLow.status).toBe(2);
    expect(tooLow.stdout).toBe('');
    expect(tooLow.stderr).toContain(
      'the cheapest class needs at least 1 GPU, and boa pays whole nodes of 4 GPUs',
    );
    expect(tooLow.stderr).toContain('try: boa budget set 4');
    expect(tooLow.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await storedBudget(s)).toBe(5);
    expect(lowJson.status).toBe(2);
    expect(JSON.parse(lowJson.stdout).error.minFeasibleBudget).toBe(4);
  });

  it("warns with the table's own minimum while the load needs computed before the new plan are stale", async () => {
    // Expected: the queries' worker is busy (held) when jobs arrive, so the load needs kept from before
    // stand while it computes; the plan made for the new budget computes the current minimum. The warning
    // compares the budget with that same figure, digit for digit the "minimum feasible" row. Before: it
    // read the stale load needs (8.138 against a table of 8.392).
    const queries = new GatedQueries();
    const s = await started({ queries, config: { priorRates: { cifar10: 8 } } });
    cleanups.push(async () => {
      for (const held of queries.heldQueries.splice(0)) held.go();
    });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    for (let i = 0; i < 6; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    const low = await s.boa(['budget', 'set', '5']);
    expect(low.status, low.stderr).toBe(0);
    const paid = /^minimum feasible\s+([\d.]+) GPU-hours\/hour/m.exec(low.stdout)?.[1];
    const warned = /^warning\s+budget 5 is below ([\d.]+) GPU-hours\/hour/m.exec(low.stdout)?.[1];
    expect(paid, low.stdout).toBeDefined();
    expect(warned, low.stdout).toBeDefined();
    expect(Number(warned).toPrecision(4)).toBe(Number(paid).toPrecision(4));
  });

  it.each([
    // Every refusal of a value says what a budget must be: the service with the smallest accepted
    // one (0 and -5 said only "must be > 0", and 0.5 was refused next as below 4: a newcomer).
    [
      ['budget', 'set', '0'],
      /^boa: gpuHoursPerHour must be a number of GPU-hours per hour of at least 4, the smallest accepted budget \(the cheapest class needs at least 1 GPU, and boa pays whole nodes of 4 GPUs\), got 0; to stop spending, cancel the jobs \(try: boa budget set 4\)\n$/,
    ],
    [
      ['budget', 'set', '-5'],
      /at least 4, the smallest accepted budget .*, got -5; .*\(try: boa budget set 4\)/,
    ],
    [['budget', 'set', 'abc'], BUDGET_KIND('abc')],
    [['budget', 'set', 'forty'], BUDGET_KIND('forty')],
    // Hex, binary and octal read as numbers by JavaScript: 0x10 set a budget of 16.
    [['budget', 'set', '0x10'], BUDGET_KIND('0x10')],
    [['budget', 'set', '0b11'], BUDGET_KIND('0b11')],
    // Past what a double holds: not "must be a number".
    [['budget', 'set', '1e400'], /gpuHoursPerHour is beyond what a number can hold, got "1e400"/],
    // The API's message names the field once.
    [['budget', 'set', '1e9'], /^boa: gpuHoursPerHour is at most 100000\n$/],
    [['budget', 'set'], /missing required argument 'gpuHoursPerHour'/],
  ])('refuses %j with exit 2 and changes nothing', async (args, message) => {
    const s = await started();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const bad = await s.boa(args);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(message);
    expect(await storedBudget(s)).toBe(40);
  });
});

describe('boa connection errors', () => {
  it('exits 4 on a wrong token and changes nothing', async () => {
    const s = await started();
    // Two refusals, which change nothing: at once.
    const [wrong, flag] = await Promise.all([
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: 'not-the-operator-token' }),
      s.boa(['--token', 'not-the-operator-token', 'status']),
    ]);
    expect(wrong.status).toBe(4);
    expect(wrong.stderr).toBe(
      'boa: the token in BOA_TOKEN was refused: set BOA_TOKEN to the operator token (local: the file data/token)\n',
    );
    expect(await storedBudget(s)).toBeNull();
    expect(flag.status).toBe(4);
    expect(flag.stderr).toBe(
      'boa: the token given with --token was refused: give the operator token (local: the file data/token)\n',
    );
  });

  it('exits 4 when no token is found, and reads data/token for a local service', async () => {
    const s = await started();
    // Another service's token file (another data dir), for the second refusal.
    mkdirSync(join(s.cwd, 'other'));
    writeFileSync(join(s.cwd, 'other', 'token'), 'a-token-of-another-service\n');
    // Two refusals, which change nothing: at once.
    const [none, other] = await Promise.all([
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined }),
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined, BOA_DATA_DIR: join(s.cwd, 'other') }),
    ]);
    expect(none.status).toBe(4);
    expect(none.stderr).toBe(
      `boa: no operator token was given: there is no ${join(s.cwd, 'data', 'token')} ` +
        "(set BOA_DATA_DIR to the service's data dir, or BOA_TOKEN to the operator token)\n",
    );
    expect(await storedBudget(s)).toBeNull();

    // Another service's token file: named, with what to set; since 2026-12-02 not sent (this service
    // cannot prove it holds it), where before it was sent and refused.
    expect(other.status).toBe(4);
    expect(other.stderr).toBe(
      `boa: the service at ${s.url} did not prove it holds the operator token in ${join(s.cwd, 'other', 'token')} ` +
        `(it answered GET /token-proof with a wrong proof), so the token was not sent: that file is another ` +
        `service's, or what listens at ${s.url} is not the boa that wrote it (set BOA_DATA_DIR to this ` +
        "service's data dir, or BOA_TOKEN)\n",
    );

    mkdirSync(join(s.cwd, 'data'));
    writeFileSync(join(s.cwd, 'data', 'token'), `${s.token}\n`);
    const fromFile = await s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined });
    expect(fromFile.stderr).toBe('');
    expect(fromFile.status).toBe(0);
    expect(await storedBudget(s)).toBe(30);
  });

  it('exits 3 when no service listens at BOA_URL', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const run = await runBoa(['budget', 'get'], { BOA_URL: url, BOA_TOKEN: 'x'.repeat(20) }, process.cwd());
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(`^boa: cannot reach the boa service at ${url} \\(is it running\\? set BOA_URL\\)`),
    );
    expect(run.stderr.split('\n')).toHaveLength(2); // one line, no stack trace
  });

  it('exits 2 on a usage error or a URL that is not http', async () => {
    const s = await started();
    // Three runs that do not depend on each other: at once.
    const [unknown, version, badUrl] = await Promise.all([
      s.boa(['budjet', 'get']),
      // --version answers without asking the service: the package's version, exit 0.
      s.boa(['--version']),
      s.boa(['budget', 'get'], { BOA_URL: 'ftp://example.com' }),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'budjet'");
    // A pointer to the help, not the whole help after the error.
    expect(unknown.stderr).toContain('(add --help for usage)');
    expect(unknown.stderr).not.toContain('Usage:');
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(version).toMatchObject({ status: 0, stdout: `${pkg.version}\n` });
    expect(badUrl.status).toBe(2);
    expect(badUrl.stderr).toMatch(/must start with http:\/\/ or https:\/\//);
  });
});

describe('boa budget set on a terminal', () => {
  it.skipIf(!hasScript)(
    'asks before cutting the budget to under half or raising it over twice; no answers keep it; --yes and scripts do not ask',
    async () => {
      const s = await started();
      await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
      const no = await onTerminal(s, ['budget', 'set', '8'], 'n\n');
      expect(no.output).toContain('cut the budget from 40 to 8 GPU-hours/hour?');
      expect(no.output).toContain('the budget is unchanged');
      expect(no.status).toBe(1);
      expect(await storedBudget(s)).toBe(40);

      const yes = await onTerminal(s, ['budget', 'set', '8'], 'y\n');
      expect(yes.status).toBe(0);
      expect(await storedBudget(s)).toBe(8);

      // Not a cut to under half, or --yes: no question.
      const up = await onTerminal(s, ['budget', 'set', '5'], '');
      expect(up.output).not.toContain('cut the budget');
      expect(await storedBudget(s)).toBe(5);
      // A raise to over twice is asked about too (found in a trial: 100000 for 40 booted 39 nodes).
      const raise = await onTerminal(s, ['budget', 'set', '20'], 'n\n');
      expect(raise.output).toContain(
        'raise the budget from 5 to 20 GPU-hours/hour? At the next tick jobs may be widened and nodes launched',
      );
      expect(raise.status).toBe(1);
      expect(await storedBudget(s)).toBe(5);
      expect((await onTerminal(s, ['budget', 'set', '20'], 'y\n')).status).toBe(0);
      expect(await storedBudget(s)).toBe(20);
      // 0 is refused by the service, which names the smallest budget it takes: asking "cut the budget
      // from 20 to 0?" first had the newcomer confirm a change never made.
      // Three refusals, which change nothing: at once.
      const [zero, belowSmallest, aboveLargest] = await Promise.all([
        onTerminal(s, ['budget', 'set', '0'], 'y\n'),
        onTerminal(s, ['budget', 'set', '2'], 'y\n'),
        onTerminal(s, ['budget', 'set', '1000000000'], 'y\n'),
      ]);
      expect(zero.output).not.toContain('cut the budget');
      expect(zero.output).toMatch(/gpuHoursPerHour must be a number of GPU-hours per hour of at least/);
      expect(zero.status).not.toBe(0);
      // Nor below the smallest budget it accepts (4: one node's GPUs), nor above the largest (found in
      // review: both were asked about, confirmed, then refused).
      expect(belowSmallest.output).not.toContain('cut the budget');
      expect(belowSmallest.output).toContain('try: boa budget set 4');
      expect(aboveLargest.output).not.toContain('raise the budget');
      expect(aboveLargest.output).toContain('gpuHoursPerHour is at most 100000');
      expect(await storedBudget(s)).toBe(20);
      const forced = await onTerminal(s, ['budget', 'set', '4', '--yes'], '');
      expect(forced.output).not.toContain('cut the budget');
      expect(await storedBudget(s)).toBe(4);
      // A script (no terminal) is never asked.
      const piped = await s.boa(['budget', 'set', '0.2']);
      expect(piped.stdout + piped.stderr).not.toContain('cut the budget');
    },
    60_000,
  );

  it.skipIf(!hasScript)(
    'asks before a first budget above the GPUs the node group can ever run; within them it does not',
    async () => {
      // Found in review: with no budget set nothing was asked, so 100000 typed for 100 went through.
      const s = await started({ config: { maxNodes: 4, gpusPerNode: 4 } });
      expect((await s.request('GET', '/v1/budget')).body.maxGpus).toBe(16);
      const no = await onTerminal(s, ['budget', 'set', '100000'], 'n\n');
      expect(no.output).toContain(
        'set a first budget of 100000 GPU-hours/hour, more than the 16 GPUs the node group can ever run?',
      );
      expect(no.output).toContain('the budget is unchanged');
      expect(no.status).toBe(1);
      expect(await storedBudget(s)).toBeNull();

      const within = await onTerminal(s, ['budget', 'set', '16'], '');
      expect(within.output).not.toContain('set a first budget');
      expect(within.status).toBe(0);
      expect(await storedBudget(s)).toBe(16);
    },
    60_000,
  );
});
