import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLLUX, runScript } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');
const KEYS = [
  'policy',
  'budget',
  'jobs',
  'completed',
  'avgJctSeconds',
  'p95JctSeconds',
  'allocatedGpuHoursPerHour',
  'paidGpuHoursPerHour',
  'rescales',
  'simMs',
];

describe('simulate', () => {
  it('prints the result object with the contract keys first, in order', () => {
    const run = runScript('simulate.ts', [
      ...['--trace', TRACE, '--apps', 'cifar10,bert,deepspeech2', '--policy', 'boa', '--budget', '40'],
      ...['--format', 'json'],
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(Object.keys(result).slice(0, KEYS.length)).toEqual(KEYS);
    expect(result).toMatchObject({
      policy: 'boa',
      budget: 40,
      jobs: 85,
      completed: 85,
      solver: null,
      seed: 1,
    });
    // The default needs no label; a variant or the trace's own rates is labelled, as compare does.
    expect(result.label).toBeUndefined();
    expect(result.paidGpuHoursPerHour).toBeGreaterThan(result.allocatedGpuHoursPerHour);
    expect(result.p95JctSeconds).toBeGreaterThan(result.avgJctSeconds);
  });

  it('prints a readable table by default and honours the engine flags', () => {
    const args = ['--trace', TRACE, '--apps', 'cifar10', '--policy', 'fixed-request'];
    const table = runScript('simulate.ts', args);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^policy\s+fixed-request$/m);
    expect(table.stdout).toMatch(/^jobs completed\s+66 of 66$/m);
    // The spend is the one yardstick: all paid over the arrival span, which the table says.
    expect(table.stdout).toMatch(/^paid GPU-hours\/hour\s+[\d.]+ \(all paid over the arrival span\)$/m);
    // An 8-hour run has one 24-hour window, the whole run: its peak day is all it paid over 24 h.
    const span = /^run span\s+([\d.]+) h$/m.exec(table.stdout)![1] as string;
    expect(Number(span)).toBeLessThan(24);
    expect(table.stdout).toMatch(
      new RegExp(
        `^most paid in 24 h\\s+[\\d.]+ GPU-hours/hour \\(the run is ${span.replace('.', '\\.')} h: all it paid, over 24 h\\)$`,
        'm',
      ),
    );
    const slow = JSON.parse(runScript('simulate.ts', [...args, '--format', 'json']).stdout);
    const fast = JSON.parse(runScript('simulate.ts', [...args, '--format', 'json', '--boot', '0']).stdout);
    expect(fast.avgQueueSeconds).toBeLessThan(slow.avgQueueSeconds);
  });

  it('with --unspent, splits the budget left unspent; the split and the paid average agree', () => {
    const args = ['--trace', TRACE, '--apps', 'cifar10,bert,deepspeech2', '--budget', '40', '--unspent'];
    const run = runScript('simulate.ts', [...args, '--policy', 'boa', '--format', 'json']);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    const u = result.unspent;
    expect(u.budgetGpuHours).toBeCloseTo(40 * result.spanHours, 6);
    expect(u.underGpuHours).toBeCloseTo(u.waitingGpuHours + u.usableGpuHours + u.unusableGpuHours, 9);
    expect(u.unusableGpuHours).toBeGreaterThan(0);
    // The budget less what went under plus what went over is the paid average over the run's own
    // span, to within the ticks at which nodes come and go.
    const ownSpan = (result.paidGpuHoursPerHour * result.arrivalSpanHours) / result.spanHours;
    const fromSplit = 40 - (u.underGpuHours - u.overGpuHours) / result.spanHours;
    expect(Math.abs(fromSplit - ownSpan)).toBeLessThan(0.03 * 40);
    // A compare variant as the policy, labelled as compare labels it, and the table's lines.
    const table = runScript('simulate.ts', [...args, '--policy', 'boa@credit0']);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^policy\s+boa \(no credit\)$/m);
    expect(table.stdout).toMatch(
      /^unspent \(of the budget\)\s+[\d.]+%: jobs waiting [\d.]+%, usable by running jobs [\d.]+%, nothing could use [\d.]+%$/m,
    );
    expect(table.stdout).toMatch(/^over the budget\s+[\d.]+%$/m);
    const noBudget = runScript('simulate.ts', ['--trace', TRACE, '--policy', 'fifo', '--unspent']);
    expect(noBudget.status).toBe(2);
    expect(noBudget.stderr).toMatch(/--unspent needs --budget/);
  });

  it('refuses an unknown policy listing the allowed ones, and a budget below the minimum', () => {
    const unknown = runScript('simulate.ts', ['--trace', TRACE, '--policy', 'nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^error: unknown policy "nope"; allowed: boa, fixed-request/);
    const variant = runScript('simulate.ts', ['--trace', TRACE, '--policy', 'boa@conf9', '--budget', '40']);
    expect(variant.status).toBe(2);
    expect(variant.stderr).toMatch(
      /^error: "boa@conf9": conf9 is not a value boa@confZ takes \(.*Z from 0 to \d+\)\n/,
    );
    expect(variant.stderr).not.toMatch(/\n\s+at /);
    const low = runScript('simulate.ts', [
      '--trace',
      TRACE,
      '--apps',
      'cifar10',
      '--policy',
      'boa',
      '--budget',
      '4',
      '--rates',
      'oracle',
    ]);
    // Only with the trace's own rates (the oracle) is the minimum known up front.
    expect(low.status).toBe(2);
    expect(low.stderr).toMatch(/below the minimum feasible budget/);
    const noBudget = runScript('simulate.ts', ['--trace', TRACE, '--apps', 'cifar10', '--policy', 'boa']);
    expect(noBudget.stderr).toMatch(/^error: --policy boa needs --budget: /);
    const bad = runScript('simulate.ts', ['--trace', TRACE, '--policy', 'boa', '--solver', 'fast']);
    expect(bad.stderr).toMatch(/--solver must be exact or paper, got "fast"/);
    // A target is a cluster efficiency: refused in one line, not by the policy with a stack trace.
    const target = runScript('simulate.ts', [
      '--trace',
      TRACE,
      '--policy',
      'pollux-autoscale',
      '--target',
      '2',
    ]);
    expect(target.status).toBe(2);
    expect(target.stderr).toBe('error: --target must be a number > 0 and < 1, got "2"\n');
  }, 180_000); // six runs of the script, each a tsx start: over a minute on a loaded 2-core machine

  it('refuses a flag the policy does not read, or one its variant contradicts, instead of echoing it', () => {
    const sim = (...args: string[]) =>
      runScript('simulate.ts', ['--trace', TRACE, '--apps', 'cifar10', ...args]);
    const budget = sim('--policy', 'pollux-autoscale', '--target', '0.5', '--budget', '8');
    expect(budget.status).toBe(2);
    expect(budget.stderr).toBe('error: --budget does not apply to pollux-autoscale; its knob is --target\n');
    const rates = sim('--policy', 'fixed-request', '--budget', '8', '--rates', 'oracle');
    expect(rates.stderr).toBe('error: --rates does not apply to fixed-request\n');
    const ceiling = sim('--policy', 'boa-price@ceiling40', '--price', '0.1', '--budget', '80');
    expect(ceiling.stderr).toBe(
      'error: --budget does not apply to boa-price (a ceiling: boa-price@ceilingB); its knob is --price\n',
    );
    const oracle = sim('--policy', 'boa@oracle', '--budget', '12', '--rates', 'online');
    expect(oracle.status).toBe(2);
    expect(oracle.stderr).toBe('error: --rates online contradicts boa@oracle, which sets rates oracle\n');
  });

  it('labels a boa variant or the trace rates in its JSON and table, as compare labels the series', () => {
    const args = ['--trace', TRACE, '--apps', 'cifar10', '--budget', '20', '--format', 'json'];
    const capped = JSON.parse(runScript('simulate.ts', [...args, '--policy', 'boa@cap2']).stdout);
    expect(capped).toMatchObject({ policy: 'boa', label: 'boa (plan cap 2x)' });
    const oracle = runScript('simulate.ts', [...args.slice(0, -2), '--policy', 'boa', '--rates', 'oracle']);
    expect(oracle.stdout).toMatch(/^policy\s+boa \(oracle rates\)$/m);
  });

  it("runs boa at a budget below the trace's minimum online, with a note naming the minimum", () => {
    const dir = mkdtempSync(join(tmpdir(), 'simulate-low-'));
    try {
      const trace = join(dir, 'trace.csv');
      // Four jobs in half an hour: read as an hour's arrivals (a span under an hour counts as one).
      const rows = [0, 600, 1200, 1800].map((t, i) => `j${i},${t},cifar10,1,128`);
      writeFileSync(trace, `name,time,application,num_replicas,batch_size\n${rows.join('\n')}\n`);
      const low = runScript('simulate.ts', ['--trace', trace, '--policy', 'boa', '--budget', '4']);
      expect(low.status, low.stderr).toBe(0);
      expect(low.stderr).toMatch(
        /^note: --budget 4 is below 4\.07 GPU-hours\/hour, the minimum feasible budget at the trace's rates: /,
      );
      const enough = runScript('simulate.ts', ['--trace', trace, '--policy', 'boa', '--budget', '9']);
      expect(enough.stderr).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a boa budget the service refuses (below one node), by its rule and in its words', () => {
    const low = runScript('simulate.ts', [
      '--trace',
      TRACE,
      '--apps',
      'cifar10',
      '--policy',
      'boa',
      '--budget',
      '1',
    ]);
    expect(low.status).toBe(2);
    expect(low.stderr).toBe(
      "error: --budget 1: boa's budget 1 GPU-hours/hour cannot keep even one job running: the cheapest class " +
        'needs at least 1 GPU, and boa pays whole nodes of 4 GPUs. The smallest accepted budget is 4. ' +
        'The service refuses such a budget, so the simulator does too.\n',
    );
  });

  it("takes --budget as a multiple of the trace's minimum feasible budget (1.5x), as compare does", () => {
    const args = ['--trace', TRACE, '--apps', 'cifar10', '--policy', 'boa', '--format', 'json'];
    const run = runScript('simulate.ts', [...args, '--budget', '1.5x']);
    expect(run.status, run.stderr).toBe(0);
    // cifar10's minimum on workload-1 is 8.76 GPU-hours/hour (the oracle refusal names it).
    expect(JSON.parse(run.stdout).budget).toBeCloseTo(1.5 * 8.76036, 3);
    // The table, for people, to two decimals (it read 13.14054).
    const table = runScript('simulate.ts', [...args.slice(0, -2), '--budget', '1.5x']);
    expect(table.stdout).toMatch(/^budget +13\.14$/m);
    const two = runScript('simulate.ts', [...args, '--budget', '1x,2x']);
    expect(two.status).toBe(2);
    expect(two.stderr).toBe('error: --budget takes one value (40 or 1.2x), got "1x,2x"\n');
  });

  it("ends a mistyped option's error with one line pointing at --help, exit 2 as any bad input", () => {
    const typo = runScript('simulate.ts', ['--trace', TRACE, '--policy', 'boa', '--budgets', '40']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toBe(
      "error: unknown option '--budgets'\n(Did you mean --budget?)\n(add --help for usage)\n",
    );
  });

  it('runs a one-job trace, its spend read over one hour (the message says so)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'simulate-one-job-'));
    try {
      const one = join(dir, 'one.csv');
      writeFileSync(one, 'name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\n');
      const out = runScript('simulate.ts', ['--trace', one, '--policy', 'boa', '--budget', '10']);
      expect(out.stderr).toBe('');
      expect(out.status).toBe(0);
      expect(out.stdout).toMatch(/jobs completed +1 of 1/);
      expect(out.stdout).toMatch(
        /paid GPU-hours\/hour +[0-9.]+ \(all paid, per hour: the arrivals span under an hour, read as one\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an application with a profile but no measured data in one line naming the file and job', () => {
    const dir = mkdtempSync(join(tmpdir(), 'simulate-unmeasured-'));
    try {
      // A profile file with one more class (copied from cifar10's) than the ground truth measured.
      const profiles = JSON.parse(readFileSync(resolve(POLLUX, '..', 'profiles.json'), 'utf8')) as {
        classes: Array<{ name: string }>;
      };
      const cifar10 = profiles.classes.find((c) => c.name === 'cifar10');
      profiles.classes.push({ ...cifar10, name: 'resnet99' });
      const profileFile = join(dir, 'profiles.json');
      writeFileSync(profileFile, JSON.stringify(profiles));
      const trace = join(dir, 'trace.csv');
      writeFileSync(
        trace,
        'name,time,application,num_replicas,batch_size\nj0,0,cifar10,1,128\nj1,60,resnet99,1,128\n',
      );
      const out = runScript('simulate.ts', [
        ...['--trace', trace, '--profiles', profileFile, '--policy', 'fixed-request', '--budget', '8'],
      ]);
      expect(out.status).toBe(2);
      expect(out.stderr).toBe(
        `error: ${trace}: job "j1" is of application "resnet99", which has no measured data ` +
          '(known: bert, cifar10, deepspeech2, imagenet, ncf, yolov3); leave it out with --apps\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a fixed-cluster policy without a usable size in one line, as bad input', () => {
    // No size at all (the engine's check), and a size the policy itself refuses (under one GPU).
    const cases = [
      ...['lyra', 'cornucopia', 'ones', 'cuckoo'].map((policy) => [policy, []] as const),
      ...['lyra', 'cornucopia'].map((policy) => [policy, ['--budget', '0.5']] as const),
    ];
    for (const [policy, extra] of cases) {
      const out = runScript('simulate.ts', [
        '--trace',
        TRACE,
        '--apps',
        'cifar10',
        '--policy',
        policy,
        ...extra,
      ]);
      expect(out.status, `${policy} ${extra.join(' ')}`).toBe(2);
      expect(out.stderr).toMatch(new RegExp(`^error: .*${policy}.* fixed cluster`));
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
