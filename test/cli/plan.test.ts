import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

// bert is mixed at 40 with these rates: two rows with their shares.
const RATES = { cifar10: 8, bert: 2 };

async function started() {
  const s = await startCliService({ config: { priorRates: RATES } });
  cleanups.push(s.close);
  return s;
}

/** The rows under the table header that starts with `first`, as whitespace-split cells. */
function tableRows(stdout: string, first: string): string[][] {
  const lines = stdout.trimEnd().split('\n');
  const header = lines.findIndex((line) => line.startsWith(`${first} `));
  expect(header).toBeGreaterThanOrEqual(0);
  return lines.slice(header + 1).map((line) => line.trim().split(/\s+/));
}

describe('boa plan', () => {
  it('says there is no plan before a budget, then shows the widths table of the computed plan', async () => {
    const s = await started();
    const none = await s.boa(['plan']);
    expect(none.status).toBe(1);
    expect(none.stderr).toBe('boa: no plan yet: set a budget first\n');

    expect((await s.boa(['budget', 'set', '40'])).status).toBe(0);
    await s.service.planner.idle();
    const plan = await s.boa(['plan']);
    expect(plan.stderr).toBe('');
    expect(plan.status).toBe(0);
    const api = (await s.request('GET', '/v1/plan')).body;
    expect(plan.stdout).toMatch(new RegExp(`^plan #${api.id}\\s+exact solver`, 'm'));
    expect(plan.stdout).toMatch(/^predicted\s+average JCT .* \(\d+ s\), allocated [\d.]+ GPU-hours\/hour$/m);

    // Every (class, share) of the API's plan is one row: rate, share, then its widths per epoch.
    const expected = Object.entries(
      api.widths as Record<string, Array<{ share: number; widths: number[] }>>,
    ).flatMap(([name, shares]) =>
      shares.map((p) => [
        name,
        (api.inputs.ratesPerHour[name] as number).toFixed(2),
        `${(p.share * 100).toFixed(1)}%`,
        ...p.widths.map(String),
      ]),
    );
    expect(tableRows(plan.stdout, 'class')).toEqual(expected);
    expect(expected.filter((row) => row[0] === 'bert')).toHaveLength(2);

    const json = await s.boa(['plan', '--json']);
    expect(JSON.parse(json.stdout)).toEqual(api);
  });

  it('recomputes the plan on request', async () => {
    const s = await started();
    const noBudget = await s.boa(['plan', 'recompute']);
    expect(noBudget.status).toBe(1);
    expect(noBudget.stderr).toMatch(/set a budget before computing a plan/);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.service.planner.idle();
    const before = (await s.request('GET', '/v1/plan')).body.id as number;
    const again = await s.boa(['plan', 'recompute']);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^plan #${before + 1}\\s`, 'm'));
  });
});

describe('boa frontier', () => {
  it('lists the frontier from the minimum feasible budget, JCT falling as the budget grows', async () => {
    const s = await started();
    const run = await s.boa(['frontier']);
    expect(run.status).toBe(0);
    const api = (await s.request('GET', '/v1/frontier')).body;
    // A service just started: its rates rest on a few minutes of the window, and both say so.
    expect(api.rateWindow).toEqual({ observedHours: expect.any(Number), windowHours: 24 });
    expect(api.rateWindow.observedHours).toBeLessThan(1);
    expect(run.stdout).toMatch(/^rates\s+0\.0 of the rate window's 24 h observed/m);
    const rows = tableRows(run.stdout, 'allocated');
    expect(rows[0]?.[0]).toBe(String(Number(api.minFeasibleBudget.toPrecision(4))));
    const budgets = rows.map((r) => Number(r[0]));
    const jcts = rows.map((r) => Number(r[1]));
    for (let i = 1; i < rows.length; i++) {
      expect(budgets[i]).toBeGreaterThanOrEqual(budgets[i - 1] as number);
      expect(jcts[i]).toBeLessThan(jcts[i - 1] as number);
    }
    expect(rows.length).toBeLessThanOrEqual(api.vertices.length);
    expect(run.stdout).toMatch(
      new RegExp(`^vertices\\s+${api.vertices.length} \\(${rows.length} distinct`, 'm'),
    );
  });

  it('says there is no load to show before any arrivals, in the table and the chart', async () => {
    const s = await startCliService({ config: {} });
    cleanups.push(s.close);
    const run = await s.boa(['frontier']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^arrivals \(jobs\/h\)\s+none yet$/m);
    // Lower case, as jobs list's "no jobs" and history's "no history imported".
    expect(run.stdout).toMatch(
      /^no arrivals yet \(no jobs, imported history or prior rates\): a frontier needs the load; import a job log or trace \(boa history import\) or give prior rates \(boa classes put --prior-rate\)$/m,
    );
    const file = join(s.cwd, 'frontier.svg');
    expect((await s.boa(['frontier', '--svg', file])).status).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('No arrivals yet: a frontier of no load');
  });

  it('after a quiet day says there were no arrivals lately, not none yet (found in review)', async () => {
    const s = await startCliService({ config: {} });
    cleanups.push(s.close);
    for (let i = 0; i < 3; i++) {
      const job = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
      expect((await s.request('POST', `/v1/jobs/${job.id}/cancel`)).status).toBe(200);
    }
    s.clock.advance(30 * 3600); // past the 24-hour rate window
    const run = await s.boa(['frontier']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^arrivals \(jobs\/h\)\s+none in the last 24 h$/m);
    expect(run.stdout).toMatch(
      /^no arrivals in the rate window \(the last 24 h; the latest submission 20.*\): a frontier needs the load; /m,
    );
    expect(run.stdout).not.toContain('no arrivals yet');
    const file = join(s.cwd, 'frontier.svg');
    expect((await s.boa(['frontier', '--svg', file])).status).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('No arrivals in the rate window: a frontier of no load');
  });

  it('writes the chart with --svg', async () => {
    const s = await started();
    const file = join(s.cwd, 'frontier.svg');
    const run = await s.boa(['frontier', '--svg', file]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`frontier chart written to ${file}\n`);
    expect(existsSync(file)).toBe(true);
    const svg = readFileSync(file, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('</svg>');
    expect(svg).not.toContain('your budget'); // no budget set yet
    expect(svg).toContain('What each budget buys, as the model predicts');

    // With a budget, the chart marks it and the current plan; the table states both.
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.boa(['frontier', '--svg', file]);
    const marked = readFileSync(file, 'utf8');
    expect(marked).toContain('your budget 40');
    expect(marked).toMatch(/current plan: [\d.]+ GPU-h\/h/);
    expect(marked).toContain('GPU-hours per hour allocated to jobs (the budget also pays idle GPUs)');
    expect(marked).toContain('as the model predicts (no queueing');
    const listed = await s.boa(['frontier']);
    expect(listed.stdout).toMatch(/^your budget\s+40 GPU-hours\/hour$/m);
    expect(listed.stdout).toMatch(/^current plan\s+[\d.e-]+ GPU-hours\/hour allocated, average JCT /m);

    const unwritable = await s.boa(['frontier', '--svg', join(s.cwd, 'no-such-dir', 'f.svg')]);
    expect(unwritable.status).toBe(2);
    expect(unwritable.stderr).toMatch(/cannot write .*f\.svg: its folder does not exist/);

    // A file that is not a chart (a typo'd name) is kept, not overwritten; an empty one is taken.
    const script = join(s.cwd, 'train.py');
    writeFileSync(script, 'print("train")\n');
    const kept = await s.boa(['frontier', '--svg', script]);
    expect(kept.status).toBe(2);
    expect(kept.stderr).toBe(
      `boa: will not write ${script}: it exists and is not an SVG chart (boa replaces only one it wrote): give a new file name, or remove it first\n`,
    );
    expect(readFileSync(script, 'utf8')).toBe('print("train")\n');
    const empty = join(s.cwd, 'empty.svg');
    writeFileSync(empty, '');
    expect((await s.boa(['frontier', '--svg', empty])).status).toBe(0);
    expect(readFileSync(empty, 'utf8').startsWith('<svg')).toBe(true);
  });
});
