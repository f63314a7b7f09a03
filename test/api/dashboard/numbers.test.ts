/**
 * The numbers at the top of the page in node (load-app.ts): the budget, paid, allocated, the plan, the
 * ceiling, the dollars and the GPUs below the budget, each tile's value and the label saying why.
 */
import { describe, expect, it } from 'vitest';
import { servicesClosedAfterEach } from './app-service.ts';
import { loadDashboardScript } from './load-app.ts';

const service = servicesClosedAfterEach();

describe('the numbers and tables', () => {
  it('show the budget as the operator set it, not rounded to one decimal', async () => {
    const s = await service();
    for (const budget of [12.25, 4.25, 40]) {
      expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget })).status).toBe(200);
      await s.ticks(1);
      const [view, plan, status] = await Promise.all(
        ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
      );
      expect([view.gpuHoursPerHour, plan.budget]).toEqual([budget, budget]);
      const dash = loadDashboardScript();
      dash.renderNumbers(view, plan, status);
      dash.renderTables(plan, status);
      const shown = /id="budget-value">([^<]*)</.exec(dash.element('numbers').innerHTML)?.[1];
      // At least one decimal, as before: 40 reads 40.0.
      expect(shown).toBe(budget === 40 ? '40.0' : String(budget));
      expect(dash.element('widths').innerHTML).toContain(`for ${shown} GPU-hours per hour`);
    }
  });

  /** The numbers' HTML for a service with this config at a budget of 40, after one tick. */
  const numbers = async (config: Record<string, unknown> = {}) => {
    const s = await service(config);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(1);
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    const dash = loadDashboardScript();
    dash.renderNumbers(view, plan, status);
    return dash.element('numbers').innerHTML;
  };

  it('say the unit of every spend they show, as the budget tile does', async () => {
    // Found in a newcomer trial: only the budget tile said GPU-hours per hour; paid, allocated and the
    // plan were bare numbers.
    const html = await numbers({ instanceType: 'g4dn.xlarge' });
    const labels = Object.fromEntries(
      [...html.matchAll(/id="([a-z]+)-value">.*?<\/div><div class="label">([^<]*)</g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    const spends: Array<[string, string]> = [
      ['budget', 'budget'],
      ['paid', 'paid'],
      ['allocated', 'allocated'],
      ['plan', 'the plan allocates'],
    ];
    for (const [tile, name] of spends)
      expect(labels[tile], tile).toMatch(new RegExp(`^${name}, GPU-hours per hour\\b`));
    // The others carry their own: dollars a month, minutes, counts.
    expect(labels.dollars).toBe('budget $ per month');
  });

  it('say over what span the averages are taken while the record is shorter than the window', async () => {
    const dash = loadDashboardScript();
    const view = (hours: number) => ({
      gpuHoursPerHour: 40,
      nodePricePerHour: null,
      control: null,
      window: { hours, windowHours: 24, paidGpuHoursPerHour: 18.7, allocatedGpuHoursPerHour: 10 },
    });
    const status = { nodeGroup: { desiredNodes: 1, readyNodes: 1 }, gpus: { allocated: 4, paid: 4 } };
    dash.renderNumbers(view(0.5), null, status);
    expect(dash.element('numbers').innerHTML).toContain(
      'paid, GPU-hours per hour, average of the 30.0 min on record',
    );
    dash.renderNumbers(view(24), null, status);
    expect(dash.element('numbers').innerHTML).toContain('paid, GPU-hours per hour, last 24 h average');
  });

  it("name the classes the window's allocated GPU-hours went to, the largest three, escaped", () => {
    const dash = loadDashboardScript();
    const label = (allocatedByClass?: unknown[]) => {
      const window = { hours: 24, windowHours: 24, paidGpuHoursPerHour: 4, allocatedGpuHoursPerHour: 1 };
      const view = {
        gpuHoursPerHour: 40,
        nodePricePerHour: null,
        control: null,
        window: { ...window, allocatedByClass },
      };
      dash.renderNumbers(view, null, {
        nodeGroup: { desiredNodes: 1, readyNodes: 1 },
        gpus: { allocated: 1, paid: 4 },
      });
      return /id="allocated-value">[^<]*<\/div><div class="label">([^<]*)</.exec(
        dash.element('numbers').innerHTML,
      )?.[1];
    };
    const row = (className: string | null, share: number) => ({
      className,
      gpuHours: 1,
      gpuHoursPerHour: 1,
      share,
    });
    expect(label(undefined)).toBe('allocated, GPU-hours per hour, last 24 h average');
    expect(label([])).toBe('allocated, GPU-hours per hour, last 24 h average');
    expect(label([row('bert', 0.6), row(null, 0.4)])).toBe(
      'allocated, GPU-hours per hour, last 24 h average: bert 60%, before classes were kept 40%',
    );
    const five = [row('a<b', 0.4), row('c', 0.3), row('d', 0.1), row('e', 0.1), row('f', 0.1)];
    expect(label(five)).toBe(
      'allocated, GPU-hours per hour, last 24 h average: a&#60;b 40%, c 30%, d 10%, 2 more',
    );
  });

  it("show the plan's GPUs as allocated, and the idle fill's lent ones apart when there are some", () => {
    const dash = loadDashboardScript();
    const view = {
      gpuHoursPerHour: 40,
      nodePricePerHour: null,
      control: null,
      window: { hours: 24, windowHours: 24, paidGpuHoursPerHour: 4, allocatedGpuHoursPerHour: 1 },
    };
    const tile = (gpus: object) => {
      dash.renderNumbers(view, null, { nodeGroup: { desiredNodes: 1, readyNodes: 1 }, gpus });
      const html = dash.element('numbers').innerHTML;
      return /id="gpus-value">([^<]*)<\/div><div class="label">([^<]*)</.exec(html)?.slice(1);
    };
    expect(tile({ allocated: 1, lent: 3, paid: 4 })).toEqual([
      '1 / 4',
      'GPUs allocated / paid (3 more lent by the idle fill)',
    ]);
    expect(tile({ allocated: 1, lent: 0, paid: 4 })).toEqual(['1 / 4', 'GPUs allocated / paid']);
  });

  it('say the nodes desired are not known yet, not 0, before the node group is read', () => {
    // GET /v1/status's desiredNodes is null until the group is read or resized (the nodes table said
    // '-'; the tile said 0, as if boa asked for none).
    const dash = loadDashboardScript();
    const view = {
      gpuHoursPerHour: 40,
      nodePricePerHour: null,
      control: null,
      window: { hours: 24, windowHours: 24, paidGpuHoursPerHour: 0, allocatedGpuHoursPerHour: 0 },
    };
    const tile = (nodeGroup: object) => {
      dash.renderNumbers(view, null, { nodeGroup, gpus: { allocated: 0, lent: 0, paid: 0 } });
      return /id="nodes-value">([^<]*)</.exec(dash.element('numbers').innerHTML)?.[1];
    };
    expect(tile({ desiredNodes: null, readyNodes: null })).toBe('- / -');
    expect(tile({ desiredNodes: 0, readyNodes: 0 })).toBe('0 / 0');
  });

  it('say, while the paid average is over, when it is back within the budget at the rate paid now', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    expect(view.window.backWithinBudget).toBeNull();
    const dash = loadDashboardScript();
    const label = (backWithinBudget: unknown) => {
      dash.renderNumbers({ ...view, window: { ...view.window, backWithinBudget } }, plan, status);
      return /id="paid-value">.*?<\/div><div class="label">([^<]*)</.exec(
        dash.element('numbers').innerHTML,
      )![1];
    };
    expect(label(null)).not.toMatch(/within/);
    expect(label({ at: '2026-12-01T19:30:00.000Z', paidGpusNow: 4 })).toMatch(
      /; within the budget from 2026-12-01T19:30:00Z if paid stays at 4 GPUs, as now$/,
    );
    expect(label({ at: null, paidGpusNow: 44 })).toMatch(
      /; not back within the budget at the current rate \(44 GPUs paid now\)$/,
    );
  });

  it("show the budget's dollars at the instance type's price, and none when it is not known", async () => {
    // 40 GPUs of one per node at $0.526 an hour, 730 hours a month.
    expect(await numbers({ instanceType: 'g4dn.xlarge' })).toContain('id="dollars-value">$15,359<');
    const unpriced = await numbers({ instanceType: 'p4d.24xlarge', gpusPerNode: 8 });
    expect(unpriced).toContain('id="budget-value">40.0<');
    expect(unpriced).not.toContain('dollars-value');
    expect(unpriced).not.toContain('$');
    // Above the 16 GPUs the node group can run, the dollars are theirs, and the label says so.
    const above = await numbers({ maxNodes: 4, gpusPerNode: 4 });
    expect(above).toContain('id="dollars-value">$11,423<');
    expect(above).toContain("budget $ per month (at most the node group's 16 GPUs)");
  });

  it('flag the paid average as over only against the budgets in force over its window, not after a cut', async () => {
    // Found in a trial: 40 for half an hour with a job running, then a cut to 8. The window promised
    // 40 for its first half hour; its paid average is above 8 with nothing overspent, and the tile
    // was red.
    const s = await service({ leaseSeconds: 86_400 });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).status).toBe(201);
    await s.ticks(30);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 8 });
    await s.ticks(2);
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    const w = view.window;
    expect(w.paidGpuHoursPerHour).toBeGreaterThan(8);
    // 40 for 30 of the 32 minutes on record, 8 for the last 2.
    expect(w.budgetGpuHoursPerHour).toBeCloseTo((40 * 30 + 8 * 2) / 32, 1);
    expect(w.paidGpuHoursPerHour).toBeLessThan(w.budgetGpuHoursPerHour);
    const dash = loadDashboardScript();
    dash.renderNumbers(view, plan, status);
    const html = dash.element('numbers').innerHTML;
    expect(html).toMatch(/id="paid-value"><span class="">/);
    expect(html).toContain(`(the budgets in force over it: ${w.budgetGpuHoursPerHour.toFixed(2)})`);
    // Paid above what the window was promised is still flagged.
    dash.renderNumbers({ ...view, window: { ...w, budgetGpuHoursPerHour: 8 } }, plan, status);
    expect(dash.element('numbers').innerHTML).toMatch(/id="paid-value"><span class="over">/);
  });

  it('say the ceiling on the GPUs paid now, and why it is above or below the budget', async () => {
    // Found in review: 48 GPUs paid beside a budget of 40 and "0.0 GPUs below the budget now", with
    // nothing on the page saying the window had room for it (`boa budget get` says it: its ceiling).
    const s = await service({ leaseSeconds: 86_400 });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const dash = loadDashboardScript();
    const tile = async () => {
      const [view, plan, status] = await Promise.all(
        ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
      );
      dash.renderNumbers(view, plan, status);
      const shown = /id="ceiling-value">([^<]*)<\/div><div class="label">([^<]*)</.exec(
        dash.element('numbers').innerHTML,
      );
      return { view, plan, status, value: shown?.[1], label: shown?.[2] };
    };
    const fresh = await tile();
    expect(fresh.value).toBe(fresh.view.control.ceilingGpus.toFixed(2));
    expect(fresh.view.control.ceilingGpus).toBeGreaterThan(40);
    expect(fresh.label).toBe(
      `ceiling: GPUs paid at most for the next 1 h, ${fresh.view.control.ceilingNodes} nodes, keeping the ` +
        '24 h average within the budget; above the budget, which is a 24 h average the window has room in',
    );
    // Half an hour of 3 jobs' nodes, then a cut to the smallest budget: spend above it is paid back.
    for (let i = 0; i < 3; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(30);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 });
    await s.ticks(1);
    const cut = await tile();
    expect(cut.view.control.ceilingGpus).toBeLessThan(4);
    expect(cut.value).toBe(cut.view.control.ceilingGpus.toFixed(2));
    expect(cut.label).toMatch(
      /keeping the 24 h average within the budget; below the budget while spend above it earlier in the window is paid back$/,
    );
    // Past the node group's GPUs, and held for the budget guard: each said.
    const { view, plan, status } = fresh;
    dash.renderNumbers(
      { ...view, maxGpus: 40, control: { ...view.control, heartbeatHoldNodes: 1 } },
      plan,
      status,
    );
    expect(dash.element('numbers').innerHTML).toContain(
      "room in; the node group holds at most 40 GPUs; held at 1 node: boa's heartbeat is not reaching " +
        'CloudWatch, and the budget guard would set that many (see the metrics_failed log)</div>',
    );
  });

  it('say why the plan allocates less than the budget when the plan cap holds it down', async () => {
    // Found trying boa as a newcomer: a budget of 40 beside "the plan allocates 5.81", nothing saying why.
    const [, spend, label] = /id="plan-value">([^<]*)<\/div><div class="label">([^<]*)</.exec(
      await numbers(),
    )!;
    expect(Number(spend)).toBeLessThan(40);
    expect(label).toBe(
      'the plan allocates, GPU-hours per hour: held by the plan cap, a multiple of what the expected load needs, until more jobs come or budget goes unspent',
    );
  });

  it('say why the plan allocates more than the budget: it is below the minimum for the load', async () => {
    // Without the plan cap, a plan within the budget needs no word.
    expect(await numbers({ planCapMultiple: 0 })).toContain(
      '<div class="label">the plan allocates, GPU-hours per hour</div>',
    );
    // Jobs arriving faster than 40 GPU-hours per hour can serve.
    const html = await numbers({ priorRates: { imagenet: 6 } });
    const [, spend, label] = /id="plan-value">([^<]*)<\/div><div class="label">([^<]*)</.exec(html)!;
    expect(Number(spend)).toBeGreaterThan(40);
    expect(label).toBe(
      `the plan allocates, GPU-hours per hour: the cheapest, as the budget is below the minimum ${spend} the expected load needs; jobs wait for the budget when even the cheapest plan does not fit, and spend is held at the budget`,
    );
  });

  it('name the minimum a budget is below as paid, the GPUs it allocates to jobs beside it', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(1);
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    // A budget of 10 against a load needing 12 GPUs for its jobs, 15 paid at the window's overhead.
    const below = {
      ...plan,
      budget: 10,
      planningBudget: 8,
      minFeasibleBudget: 12,
      minFeasiblePaidBudget: 15,
      inputs: { ...plan.inputs, clampedToMinimum: true },
    };
    const dash = loadDashboardScript();
    dash.renderNumbers(view, below, status);
    expect(dash.element('numbers').innerHTML).toContain(
      'the cheapest, as the budget is below the minimum 15.00 paid (12.00 allocated to jobs) the expected load needs;',
    );
  });

  it('say the planning budget, not the budget, is below the minimum when only it is', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(1);
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    // As compute.ts makes it when the budget planned with (paid/allocated corrected, warm-up, credit,
    // cap) is 30 and the load needs 35, the budget being 40 (found in review: said "the budget is below").
    const clamped = {
      ...plan,
      budget: 40,
      planningBudget: 30,
      minFeasibleBudget: 35,
      predicted: { ...plan.predicted, gpuHoursPerHour: 35 },
      inputs: { ...plan.inputs, planningBudget: 30, clampedToMinimum: true },
    };
    const dash = loadDashboardScript();
    dash.renderNumbers(view, clamped, status);
    const label = /id="plan-value">[^<]*<\/div><div class="label">([^<]*)</.exec(
      dash.element('numbers').innerHTML,
    )![1];
    expect(label).toBe(
      'the plan allocates, GPU-hours per hour: the cheapest, as the planning budget 30.00 (the budget corrected for GPUs paid but not booked by the plan, lent ones included, warm-up, credit or debt and the plan cap) is below the minimum 35.00 the expected load needs',
    );
  });

  it('say a plan the credit raised to the minimum without paying for it is the cheapest, widened', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(1);
    const [view, plan, status] = await Promise.all(
      ['/v1/budget', '/v1/plan', '/v1/status'].map(async (p) => (await s.request('GET', p)).body),
    );
    // As compute.ts flags it when the paid/allocated correction takes the budget of 40 to 33, below the
    // minimum of 38, and the credit (x 1.05) raises it to 39.9 but pays for 35 of it.
    const raised = {
      ...plan,
      budget: 40,
      planningBudget: 39.9,
      minFeasibleBudget: 38,
      predicted: { ...plan.predicted, gpuHoursPerHour: 39.9 },
      inputs: { ...plan.inputs, planningBudget: 39.9, unraisedBudget: 35, clampedToMinimum: true },
    };
    const dash = loadDashboardScript();
    dash.renderNumbers(view, raised, status);
    const label = /id="plan-value">[^<]*<\/div><div class="label">([^<]*)</.exec(
      dash.element('numbers').innerHTML,
    )![1];
    expect(label).toBe(
      'the plan allocates, GPU-hours per hour: the cheapest, widened by the credit of budget unspent earlier, as the budget corrected for GPUs paid but not booked by the plan, lent ones included, warm-up and the plan cap, with that credit, is below the minimum 38.00 the expected load needs',
    );
  });

  it('say why fewer GPUs than the budget are paid for now', async () => {
    // No job, no node: the whole budget is below it, and nothing present can use it.
    expect(await numbers()).toContain(
      '<div class="value" id="below-value">40.0</div><div class="label">GPUs below the budget now: running jobs could use 0.0, no job present can use 40.0</div>',
    );
  });
});
