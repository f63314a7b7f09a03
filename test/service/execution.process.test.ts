/**
 * Issue 10's "what it must show", as a new user would see it: a real service process (`npm start`'s
 * entry) on the embedded default with the local executor, driven through the real `boa` CLI, running
 * examples/fake-train.mjs as real processes with short ticks and boot times.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { runBoa, unusedPort } from '../cli/cli-harness.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { killHard, type ServiceProcess, startProcess } from './process-harness.ts';

const REPO = resolve(import.meta.dirname, '../..');
const FAKE_TRAIN = 'examples/fake-train.mjs';

/**
 * One class whose plan at budget 30 (10 jobs an hour) is width 1 in its first statistical epoch (no
 * speedup there) and 4 in its second (linear): a job of it rescales once, from 1 GPU to 4.
 */
const PROFILES = {
  version: 1,
  instanceType: 'g4dn.12xlarge',
  gpusPerNode: 4,
  source: 'test: a class that widens',
  classes: [
    {
      name: 'widens',
      weight: 1,
      rescaleSeconds: 2,
      epochs: [
        { workSeconds: 3600, speedup: { '1': 1, '2': 1, '4': 1 } },
        { workSeconds: 3600, speedup: { '1': 1, '2': 2, '4': 4 } },
      ],
    },
  ],
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Boa {
  dataDir: string;
  url: string;
  start(): Promise<ServiceProcess>;
  boa(...args: string[]): ReturnType<typeof runBoa>;
  /** Every replica record (pid file) under DATA_DIR/jobs, with its log. */
  replicas(jobId: number): Array<{ generation: number; rank: number; pid?: number; log: string }>;
}

async function boaService(config: Record<string, unknown> = {}): Promise<Boa> {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-exec-svc-'));
  const cwd = mkdtempSync(join(tmpdir(), 'boa-exec-cli-'));
  const port = await unusedPort();
  const profiles = join(dataDir, 'profiles.json');
  writeFileSync(profiles, JSON.stringify(PROFILES));
  const configFile = join(cwd, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      profiles,
      priorRates: { widens: 10 },
      budget: 30,
      tickSeconds: 1,
      local: { maxNodes: 4, bootSeconds: 1, releaseSeconds: 1 },
      terminationGraceSeconds: 10,
      restartBackoffSeconds: 0.2,
      maxRestarts: 2,
      ...config,
    }),
  );
  const services: ServiceProcess[] = [];
  const jobsDir = join(dataDir, 'jobs');
  const replicas = (jobId: number) => {
    const out: Array<{ generation: number; rank: number; pid?: number; log: string }> = [];
    const jobDir = join(jobsDir, String(jobId));
    if (!existsSync(jobDir)) return out;
    for (const generation of readdirSync(jobDir)) {
      for (const file of readdirSync(join(jobDir, generation)).filter((f) => f.endsWith('.log'))) {
        const rank = Number(file.slice(0, -4));
        const pidFile = join(jobDir, generation, `${rank}.pid`);
        const pid = existsSync(pidFile) ? JSON.parse(readFileSync(pidFile, 'utf8')).pid : undefined;
        const log = readFileSync(join(jobDir, generation, file), 'utf8');
        out.push({ generation: Number(generation), rank, pid, log });
      }
    }
    return out.sort((a, b) => a.generation - b.generation || a.rank - b.rank);
  };
  cleanups.push(async () => {
    for (const service of services) await killHard(service.child);
    // Nothing a test started may outlive it: every replica's process group is killed.
    killReplicaGroups(jobsDir);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  });
  return {
    dataDir,
    url: `http://127.0.0.1:${port}`,
    replicas,
    start: async () => {
      const service = await startProcess(['--config', configFile, '--data', dataDir, '--port', String(port)]);
      services.push(service);
      return service;
    },
    boa: (...args: string[]) =>
      runBoa(args, { BOA_URL: `http://127.0.0.1:${port}`, BOA_DATA_DIR: dataDir }, cwd),
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The job as the API shows it (waits poll the API: a CLI run costs seconds on a busy machine). */
async function jobState(b: Boa, id: number): Promise<Record<string, any>> {
  const token = readFileSync(join(b.dataDir, 'token'), 'utf8').trim();
  const res = await fetch(`${b.url}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

async function submit(b: Boa, ...args: string[]): Promise<{ id: number; job: Record<string, any> }> {
  const made = await b.boa('jobs', 'submit', 'widens', '--json', ...args);
  expect(made.status, made.stderr).toBe(0);
  return JSON.parse(made.stdout);
}

describe('jobs run by the local executor (real service process, real CLI)', () => {
  it('runs a job at its width, rescales it (SIGTERM, then a new generation) and finishes it: done', async () => {
    const b = await boaService();
    await b.start();
    const { id, job } = await submit(
      b,
      '--name',
      't',
      '--workdir',
      REPO,
      '--',
      'node',
      FAKE_TRAIN,
      '--work-seconds',
      '8',
      '--epochs',
      '2',
      '--poll-seconds',
      '30',
    );
    // Admitted at submission if the first plan is ready, else at the next tick.
    const widths =
      job.widths ?? (await until('admission', async () => (await jobState(b, id)).widths ?? undefined));
    expect(widths).toEqual([1, 4]);
    const done = await until('the job done', async () => {
      const state = await jobState(b, id);
      return state?.state === 'done' ? state : undefined;
    });
    expect(done.restarts).toBe(0);

    const replicas = b.replicas(id);
    const started = replicas.filter((r) => r.log.includes('fake-train job'));
    // Generation 1 at width 1, then the rescale to 4 GPUs on one node: one process each.
    expect(started.map((r) => /WORLD_SIZE=(\d+)/.exec(r.log)?.[1])).toEqual(['1', '4']);
    const [first, second] = started as [(typeof started)[0], (typeof started)[0]];
    expect(second.generation).toBeGreaterThan(first.generation);
    expect(first.log).toContain('stopping (SIGTERM)');
    expect(second.log).toContain('all 2 epochs done');
    // Done: its processes end and their records go at the next reconcile; the logs stay.
    await until('the records removed', () => b.replicas(id).every((r) => r.pid === undefined));
    const list = await b.boa('jobs', 'list');
    expect(list.stdout).toMatch(new RegExp(`^\\s*${id}\\s+t\\s+widens\\s+done`, 'm'));
  }, 240_000);

  it('after kill -9 of the service adopts the running replica: none started twice, none orphaned, no job lost', async () => {
    const b = await boaService();
    const first = await b.start();
    const { id } = await submit(b, '--workdir', REPO, '--', 'node', FAKE_TRAIN, '--work-seconds', '3600');
    // The replica of the job's current generation, running (not one the service is already replacing).
    const running = await until('the replica running', async () => {
      const replica = b
        .replicas(id)
        .find((r) => r.pid !== undefined && processExists(r.pid) && r.log.includes('fake-train job'));
      return replica && (await jobState(b, id)).generation === replica.generation ? replica : undefined;
    });
    await killHard(first.child);
    expect(processExists(running.pid as number)).toBe(true);
    const second = await b.start();
    // Several ticks of the new service: it adopts, and starts nothing again.
    await new Promise((r) => setTimeout(r, 4000));
    const after = b.replicas(id);
    // On failure: what the replica printed (its stop reason), what both services did, the job as seen.
    const evidence = () =>
      `job: ${JSON.stringify(after.map(({ generation, rank, pid }) => ({ generation, rank, pid })))}\n` +
      after.map((r) => `replica ${r.generation}/${r.rank} log:\n${r.log}`).join('\n') +
      `\nfirst service:\n${first.output().split('\n').slice(-30).join('\n')}` +
      `\nsecond service:\n${second.output().split('\n').slice(-60).join('\n')}`;
    expect(
      after.filter((r) => r.log.includes('fake-train job')),
      evidence(),
    ).toHaveLength(1);
    expect(after.find((r) => r.generation === running.generation)?.pid, evidence()).toBe(running.pid);
    expect(processExists(running.pid as number)).toBe(true);
    expect((await jobState(b, id))?.state).toBe('running');

    const cancel = await b.boa('jobs', 'cancel', String(id));
    expect(cancel.status, cancel.stderr).toBe(0);
    await until('the replica gone', () => !processExists(running.pid as number));
    const log = b.replicas(id).find((r) => r.generation === running.generation)?.log ?? '';
    // Stopped gracefully: by the SIGTERM, or by its own poll seeing the cancel first.
    expect(log).toMatch(/stopping \((SIGTERM|job cancelled)\)/);
  }, 240_000);

  it('finishes a job that ended while the service was down when it ended, not when the service came back', async () => {
    const b = await boaService();
    const first = await b.start();
    const { id } = await submit(b, '--', 'sh', '-c', 'echo started; sleep 3');
    const running = await until('the replica running', () =>
      b.replicas(id).find((r) => r.pid !== undefined && r.log.includes('started')),
    );
    await killHard(first.child);
    const exitFile = join(b.dataDir, 'jobs', String(id), String(running.generation), `${running.rank}.exit`);
    await until('its exit recorded', () => existsSync(exitFile));
    const exitAt = JSON.parse(readFileSync(exitFile, 'utf8')).at as number;
    await new Promise((r) => setTimeout(r, 4000)); // down a while longer
    const restartedAt = Date.now();
    await b.start();
    const done = await until('the job done', async () => {
      const state = await jobState(b, id);
      return state.state === 'done' ? state : undefined;
    });
    const finishedAt = Date.parse(done.finishedAt);
    // The exit record has whole seconds; the ledger's last sample before the crash may bound it below.
    expect(finishedAt).toBeLessThan(restartedAt - 2000);
    expect(Math.abs(finishedAt - exitAt)).toBeLessThan(2000);
  }, 240_000);

  it('resumes a job whose replica a shutdown stopped (SIGTERM to its process group): not done, not a restart', async () => {
    // Any run counts as long enough here: the test stops the replica seconds after it starts.
    const b = await boaService({ interruptedMinRunSeconds: 0 });
    await b.start();
    const { id } = await submit(b, '--workdir', REPO, '--', 'node', FAKE_TRAIN, '--work-seconds', '3600');
    const running = await until('the replica running', () =>
      b.replicas(id).find((r) => r.pid !== undefined && r.log.includes('fake-train job')),
    );
    // What a machine's shutdown does to every process: the job checkpoints and exits 0.
    process.kill(-(running.pid as number), 'SIGTERM');
    const resumed = await until('a new generation', () =>
      b.replicas(id).find((r) => r.generation > running.generation && r.log.includes('resumed in epoch')),
    );
    const stopped = b.replicas(id).find((r) => r.generation === running.generation)?.log ?? '';
    expect(stopped).toContain('stopping (SIGTERM)');
    const job = await jobState(b, id);
    expect(job).toMatchObject({ state: 'running', restarts: 0, generation: resumed.generation });
    expect((await b.boa('jobs', 'cancel', String(id))).status).toBe(0);
  }, 240_000);

  it('refuses bad input naming the field, storing nothing; a job failing every time ends failed with its code', async () => {
    const b = await boaService();
    await b.start();
    const refused = async (args: string[], field: string) => {
      const run = await b.boa('jobs', 'submit', ...args);
      expect(run.status, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toContain(field);
    };
    await refused(['nosuchclass', '--', 'node', '-e', '0'], 'unknown class');
    await refused(['widens', '--', 'no-such-program-boa-test'], 'workload.command');
    await refused(['widens', '--', './missing/train.sh'], 'workload.command');
    await refused(['widens', '--image', 'my image:1', '--', 'node', '-e', '0'], 'workload.image');
    // An empty command and a non-string env value cannot be typed on the CLI: straight to the API.
    const token = readFileSync(join(b.dataDir, 'token'), 'utf8').trim();
    for (const [workload, field] of [
      [{ command: [] }, 'workload.command'],
      [{ command: ['node'], env: { EPOCHS: 90 } }, 'workload.env.EPOCHS'],
    ] as const) {
      const res = await fetch(`${b.url}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ class: 'widens', workload }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
    }
    expect((await b.boa('jobs', 'list')).stdout).toBe('no jobs\n');

    const { id } = await submit(b, '--', 'node', '-e', 'process.exit(3)');
    const failed = await until('the job failed', async () => {
      const state = await jobState(b, id);
      return state?.state === 'failed' ? state : undefined;
    });
    expect(failed).toMatchObject({ exitCode: 3, restarts: 2 });
    // Three generations ran (the first and two restarts), each once.
    expect(b.replicas(id)).toHaveLength(3);
    const list = await b.boa('jobs', 'list', '--state', 'failed');
    expect(list.stdout).toContain('exit 3: rank 0 exited 3 (after 2 restarts)');
    // The service keeps going: the next job runs.
    const next = await submit(b, '--', 'node', '-e', '0');
    await until('the next job done', async () => (await jobState(b, next.id))?.state === 'done');
  }, 240_000);
});
