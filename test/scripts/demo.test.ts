import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ramTmpdir } from '../helpers/ram-tmp.ts';
import { POLLUX, REPO, runScript, runScriptAsync, type ScriptRun } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');
const ARGS = ['--trace', TRACE, '--apps', 'cifar10,bert,deepspeech2', '--budget', '40'];
const state = mkdtempSync(join(ramTmpdir(), 'boa-demo-test-'));
// Replays without --state keep their service's data dir in TMPDIR: the RAM-backed one too.
const RAM_TMP = { TMPDIR: ramTmpdir() };
afterAll(() => rmSync(state, { recursive: true, force: true }));

/** Starts the demo paced in real time and kills it with SIGKILL once it reports progress. */
function runAndKill(state: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(REPO, 'scripts/demo.ts'), ...ARGS, '--speed', '2500', '--state', state],
      { cwd: REPO },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (/replay \d/.test(stderr)) child.kill('SIGKILL');
    });
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? done(stderr) : fail(new Error(`ended before the kill: ${stderr}`)),
    );
  });
}

// A full replay of workload-1 takes tens of seconds: the tests that can start from the same one do.
let killed: Promise<{ dir: string; stderr: string }> | undefined;
/** A copy of the state one replay killed with SIGKILL left (killed once per file), for a test to resume. */
async function killedReplayState(): Promise<{ dir: string; stderr: string }> {
  killed ??= (async () => {
    const dir = mkdtempSync(join(state, 'killed-'));
    return { dir, stderr: await runAndKill(dir) };
  })();
  const { dir, stderr } = await killed;
  const copy = mkdtempSync(join(state, 'resumed-'));
  cpSync(dir, copy, { recursive: true });
  return { dir: copy, stderr };
}

let stateless: Promise<{ run: ScriptRun; tmp: string }> | undefined;
/** Workload-1 replayed once without --state, with a TMPDIR of its own to see that it leaves nothing there. */
function replayWithoutState(): Promise<{ run: ScriptRun; tmp: string }> {
  stateless ??= (async () => {
    const tmp = mkdtempSync(join(state, 'tmp-'));
    return { run: await runScriptAsync('demo.ts', [...ARGS, '--prior', 'none'], { TMPDIR: tmp }), tmp };
  })();
  return stateless;
}

describe('demo replay', () => {
  it('survives kill -9: no job lost or duplicated, no resize sent twice, the ledger continues', async () => {
    const { dir, stderr: killedAt } = await killedReplayState();
    expect(killedAt).toMatch(/replay \d+\.\d+ h: \d+\/85 jobs done/);
    const resumed = await runScriptAsync('demo.ts', [...ARGS, '--state', dir]);
    expect(resumed.status).toBe(0);
    expect(resumed.stderr).toMatch(/resuming the replay/);
    const result = JSON.parse(resumed.stdout);
    expect(result).toMatchObject({ jobs: 85, completed: 85 });
    // The ledger over the run holds the budget (measured without interruption: -1.8%).
    expect(result.ledgerPaidGpuHoursPerHour / 40 - 1).toBeLessThan(0.01);
    expect(result.ledgerPaidGpuHoursPerHour / 40 - 1).toBeGreaterThan(-0.05);

    const db = new Database(join(dir, 'boa.sqlite'), { readonly: true });
    const jobs = db.prepare('select name, state from jobs').all() as Array<{ name: string; state: string }>;
    expect(jobs).toHaveLength(85);
    expect(new Set(jobs.map((j) => j.name)).size).toBe(85);
    expect(jobs.every((j) => j.state === 'done')).toBe(true);
    const resizes = db.prepare('select at, target, status from resizes order by id').all() as Array<{
      at: number;
      target: number;
      status: string;
    }>;
    // boa removes nodes one by one (each termination lowers the desired size), so the same target may be
    // asked for again later; never twice without a node removed between the two requests.
    const removedAt = (
      db.prepare('select terminated_at from node_removals where terminated_at is not null').all() as Array<{
        terminated_at: number;
      }>
    ).map((r) => r.terminated_at);
    // A kill between storing a resize and the node group taking it leaves the row `interrupted` (the
    // group never had it), and the restart asks again: that is the one request the group saw.
    for (let i = 1; i < resizes.length; i++) {
      const [before, after] = [resizes[i - 1], resizes[i]] as const;
      if (before?.target !== after?.target || before?.status === 'interrupted') continue;
      expect(removedAt.some((t) => t >= (before?.at ?? 0) && t <= (after?.at ?? 0))).toBe(true);
    }
    expect(resizes.filter((r) => r.status !== 'applied').map((r) => r.status)).toEqual(
      resizes.some((r) => r.status === 'interrupted') ? ['interrupted'] : [],
    );
    // The allocation ledger has no gap: each sample starts where the one before ended.
    const samples = db.prepare('select from_ms, to_ms from allocation_samples order by id').all() as Array<{
      from_ms: number;
      to_ms: number;
    }>;
    for (let i = 1; i < samples.length; i++) expect(samples[i]?.from_ms).toBe(samples[i - 1]?.to_ms);
    db.close();
  }, 120_000);

  it('resumes a kill that fell between a completion the service took and the next snapshot', async () => {
    const { dir: racy } = await killedReplayState();
    try {
      // The state such a kill leaves: the service has the job done, the replay's snapshot has it running.
      const db = new Database(join(racy, 'boa.sqlite'));
      const row = db.prepare("select value from settings where key = 'replay'").get() as { value: string };
      const snapshot = JSON.parse(row.value) as {
        jobs: Array<{ serviceId: number; completedAt: number | null }>;
      };
      const reopened = snapshot.jobs.find((j) => j.completedAt !== null);
      expect(reopened).toBeDefined();
      (reopened as { completedAt: number | null }).completedAt = null;
      db.prepare("update settings set value = ? where key = 'replay'").run(JSON.stringify(snapshot));
      db.close();
      const resumed = await runScriptAsync('demo.ts', [...ARGS, '--state', racy]);
      expect(resumed.status, resumed.stderr.slice(-2000)).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ jobs: 85, completed: 85 });
    } finally {
      rmSync(racy, { recursive: true, force: true });
    }
  }, 120_000);

  // Like with like: the service and the simulator's boa start from the same prior (none by default, or the
  // trace's own rates) and both run the spend ceiling. Measured on workload-1 (2026-12-05): JCT -1.5% (none) and +0.7%
  // (trace); the yardstick 42.05 vs 42.05 and 38.54 vs 39.96 (-3.6%: the simulator's budget control has
  // a demand ratio and a payback the service has not, and its draws start elsewhere; 2.9% before the
  // service's jobs followed newer plans). docs/simulator.md has all eight workloads.
  it.each([
    ['none', 'online'],
    ['trace', 'prior'],
  ])(
    'matches the simulator with prior %s: average JCT within 10%, the same spend within 5%',
    async (prior, rates) => {
      const fresh = mkdtempSync(join(ramTmpdir(), 'boa-demo-fresh-'));
      try {
        // The simulator's run does not depend on the demo's: both at once.
        const [demo, sim] = await Promise.all([
          prior === 'none'
            ? replayWithoutState().then(({ run }) => run)
            : runScriptAsync('demo.ts', [...ARGS, '--prior', prior, '--state', fresh]),
          runScriptAsync('simulate.ts', [...ARGS, '--policy', 'boa', '--rates', rates, '--format', 'json']),
        ]);
        expect(demo.status, demo.stderr).toBe(0);
        expect(sim.status, sim.stderr).toBe(0);
        const d = JSON.parse(demo.stdout);
        const s = JSON.parse(sim.stdout);
        expect(d).toMatchObject({ jobs: 85, completed: 85, prior });
        expect(Math.abs(d.avgJctSeconds - s.avgJctSeconds) / s.avgJctSeconds).toBeLessThanOrEqual(0.1);
        expect(Math.abs(d.paidGpuHoursPerHour - s.paidGpuHoursPerHour) / s.paidGpuHoursPerHour).toBeLessThan(
          0.05,
        );
        expect(d.ledgerPaidGpuHoursPerHour / 40 - 1).toBeLessThan(0.01);
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    },
    120_000,
  );
  // Its jobs reported a new epoch at the next tick, so the epoch was timed from up to a tick late, and a
  // short last one, ended by the exact completion, read as several times faster than its class: the
  // service dropped it with a warning a newcomer saw in the README's demo (found in a newcomer trial).
  it("times each job's epochs as its client would: no work sample is dropped as impossible", async () => {
    const { run } = await replayWithoutState();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/work_sample_dropped/);
  }, 120_000);

  // Its launcher polls with the operator token, and workload-2's epochs outlast the 600 s lease: renewed
  // by the job's token alone, jobs were marked lost and the replay never ended (found re-measuring).
  it('finishes every job of workload-2, whose epochs outlast the lease its launcher keeps', () => {
    const trace = resolve(POLLUX, 'workloads/workload-2.csv');
    const demo = runScript('demo.ts', [...ARGS.slice(2), '--trace', trace, '--speed', 'max'], RAM_TMP);
    expect(demo.status, demo.stderr).toBe(0);
    expect(JSON.parse(demo.stdout)).toMatchObject({ jobs: 91, completed: 91 });
  }, 120_000);

  it('holds every full budget window in the ledger: a 2-hour window, sliding through 8 hours', async () => {
    const windowHours = 2;
    const [run, refused] = await Promise.all([
      runScriptAsync('demo.ts', [...ARGS, '--budget-window-hours', String(windowHours)], RAM_TMP),
      runScriptAsync('demo.ts', [...ARGS, '--budget-window-hours', '1'], RAM_TMP),
    ]);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    const heaviest = result.ledgerPeakWindowPaidGpuHoursPerHour as number;
    // Why it paid under the budget when it did (GPU-hours, jobs waiting / usable / nothing could use):
    // the parts add up, and below less above is the ledger's own shortfall over the run.
    const u = result.unspent;
    expect(u.waitingGpuHours + u.usableGpuHours + u.unusableGpuHours).toBeCloseTo(u.underGpuHours, 6);
    expect((u.underGpuHours - u.overGpuHours) / u.budgetGpuHours).toBeCloseTo(
      1 - result.ledgerPaidGpuHoursPerHour / 40,
      3,
    );
    // budget x (1 + slack x horizon / window), and the half node the ceiling keeps against flapping.
    const cap = 40 * (1 + (0.1 * 1) / windowHours);
    expect(heaviest).toBeLessThanOrEqual(cap + 2 / windowHours);
    // Measured 2026-11-27: 42, the cap itself (the load spends what the window allows).
    expect(heaviest).toBeGreaterThan(0.95 * cap);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--budget-window-hours');
  }, 120_000);

  it('leaves no temporary state behind without --state, and a refused budget is one line, exit 2', async () => {
    const { run: done, tmp } = await replayWithoutState();
    const demo = (args: string[]) => runScriptAsync('demo.ts', ['--trace', TRACE, ...args], { TMPDIR: tmp });
    expect(done.status, done.stderr).toBe(0);
    // An 8-hour replay never fills the 24-hour window: no heaviest window to report.
    expect(JSON.parse(done.stdout)).toMatchObject({
      jobs: 85,
      completed: 85,
      state: null,
      ledgerPeakWindowPaidGpuHoursPerHour: null,
    });
    expect(readdirSync(tmp).filter((f) => f.startsWith('boa-demo-'))).toEqual([]);

    // The refusals do not depend on each other: all at once.
    const [refused, badDrain, badCap, badCredit, badShare, badConfidence, badFirstDay] = await Promise.all([
      // No job runs on less than 1 GPU: a budget below that is refused.
      demo(['--budget', '0.5']),
      demo(['--budget', '40', '--drain-after-hours', '-1']),
      demo(['--budget', '40', '--plan-cap-multiple', '0.5']),
      demo(['--budget', '40', '--credit-spend-hours', 'x']),
      demo(['--budget', '40', '--credit-load-share', '0']),
      demo(['--budget', '40', '--rate-confidence', '5']),
      demo(['--budget', '40', '--first-day-arrivals', '-1']),
    ]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^error: --budget 0.5: PUT \/v1\/budget: 422 .*at least 1 GPU/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(badDrain.status).toBe(2);
    expect(badDrain.stderr).toMatch(/--drain-after-hours must be a number >= 0 \(0: never\), got "-1"/);
    expect(badCap.status).toBe(2);
    expect(badCap.stderr).toMatch(/--plan-cap-multiple must be 0 \(no cap\) or a number >= 1, got "0.5"/);
    expect(badCredit.status).toBe(2);
    expect(badCredit.stderr).toMatch(/--credit-spend-hours must be a number >= 0 \(0: never\), got "x"/);
    expect(badShare.status).toBe(2);
    expect(badShare.stderr).toMatch(/--credit-load-share must be a number > 0, got "0"/);
    expect(badConfidence.status).toBe(2);
    expect(badConfidence.stderr).toMatch(
      /--rate-confidence must be a number from 0 \(the estimate\) to 4, got "5"/,
    );
    expect(badFirstDay.status).toBe(2);
    expect(badFirstDay.stderr).toMatch(
      /--first-day-arrivals must be a number from 0 \(none\) to 10, got "-1"/,
    );
    expect(readdirSync(tmp).filter((f) => f.startsWith('boa-demo-'))).toEqual([]);
  }, 120_000);
});

describe('demo --state started with other options', () => {
  it('refuses to resume it under the new ones (the result would be labelled with them), naming what differs', () => {
    const dir = mkdtempSync(join(ramTmpdir(), 'boa-demo-options-'));
    try {
      const trace = join(dir, 'trace.csv');
      const rows = [0, 600, 1200, 1800].map((t, i) => `j${i},${t},cifar10,1,128`);
      writeFileSync(trace, `name,time,application,num_replicas,batch_size\n${rows.join('\n')}\n`);
      const replay = join(dir, 'state');
      const args = ['--trace', trace, '--state', replay];
      const first = runScript('demo.ts', [...args, '--budget', '10']);
      expect(first.status, first.stderr).toBe(0);
      // Nothing but the progress line a replay slower than 5 s writes (on a loaded machine it is).
      expect(first.stderr.replace(/^replay [\d.]+ h: \d+\/\d+ jobs done\n/gm, '')).toBe('');
      const again = runScript('demo.ts', [...args, '--budget', '10']);
      expect(again.status, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ budget: 10, jobs: 4, completed: 4 });

      const budget = runScript('demo.ts', [...args, '--budget', '12']);
      expect(budget.status).toBe(2);
      expect(budget.stderr).toBe(
        `error: --state ${replay} holds a replay started with other options (--budget 10, not 12): ` +
          'give the same ones to resume it, or another --state for a new replay\n',
      );
      writeFileSync(trace, `name,time,application,num_replicas,batch_size\n${rows.slice(1).join('\n')}\n`);
      const other = runScript('demo.ts', [...args, '--budget', '10', '--prior', 'trace']);
      expect(other.status).toBe(2);
      expect(other.stderr).toMatch(/\(another trace or --apps; --prior none, not trace\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('demo with a budget below the minimum feasible one', () => {
  it('runs it, as the service accepts it, and warns naming the minimum at the trace rates', () => {
    const dir = mkdtempSync(join(ramTmpdir(), 'boa-demo-low-'));
    try {
      const trace = join(dir, 'trace.csv');
      // Four jobs in half an hour: read as an hour's arrivals (a span under an hour counts as one).
      const rows = [0, 600, 1200, 1800].map((t, i) => `j${i},${t},cifar10,1,128`);
      writeFileSync(trace, `name,time,application,num_replicas,batch_size\n${rows.join('\n')}\n`);
      const low = runScript('demo.ts', ['--trace', trace, '--budget', '4'], RAM_TMP);
      expect(low.status, low.stderr).toBe(0);
      expect(low.stderr).toMatch(
        /^warning: --budget 4 is below 4\.07 GPU-hours\/hour, the minimum feasible budget at the trace's rates: jobs queue/,
      );
      expect(JSON.parse(low.stdout)).toMatchObject({ budget: 4, jobs: 4, completed: 4 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('demo --history', () => {
  it("imports other days' submissions into the service before the replay, and a resume must name them", async () => {
    const dir = mkdtempSync(join(ramTmpdir(), 'boa-demo-history-'));
    try {
      const write = (name: string, times: number[], app = 'cifar10') => {
        const rows = times.map((t, i) => `j${i},${t},${app},1,128`);
        writeFileSync(join(dir, name), `name,time,application,num_replicas,batch_size\n${rows.join('\n')}\n`);
        return join(dir, name);
      };
      const trace = write('trace.csv', [0, 600, 1200]);
      const before = write('before.csv', [0, 1800, 3600, 5400], 'bert');
      const replay = join(dir, 'state');
      const args = ['--trace', trace, '--budget', '10', '--state', replay];
      const run = runScript('demo.ts', [...args, '--history', before, '--history-gap-hours', '2']);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/^history: 4 arrivals imported\n/);
      expect(JSON.parse(run.stdout)).toMatchObject({ jobs: 3, completed: 3, historyArrivals: 4 });
      const db = new Database(join(replay, 'boa.sqlite'), { readonly: true });
      try {
        const stored = db
          .prepare('SELECT class_name, submitted_at FROM past_arrivals ORDER BY submitted_at')
          .all();
        const start = db
          .prepare("SELECT value FROM settings WHERE key = 'startedAt'")
          .pluck()
          .get() as string;
        // The last history submission 2 hours before the trace's first, the others at the trace's spacing.
        expect(stored).toEqual(
          [5400, 3600, 1800, 0].map((t) => ({
            class_name: 'bert',
            submitted_at: Number(start) - (2 * 3600 + t) * 1000,
          })),
        );
      } finally {
        db.close();
      }
      // Two refusals that do not depend on each other (the second has no --state): at once.
      const [without, itself] = await Promise.all([
        runScriptAsync('demo.ts', args),
        runScriptAsync('demo.ts', ['--trace', trace, '--budget', '10', '--history', trace]),
      ]);
      expect(without.status).toBe(2);
      expect(without.stderr).toMatch(/--history [0-9a-f]{16}, not none/);
      expect(itself.status).toBe(2);
      expect(itself.stderr).toMatch(/--history must not include --trace/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
