/**
 * `boa jobs wait` and `boa jobs submit --wait`: a pipeline submits, waits, and branches on the exit
 * code (0 done, 5 ended otherwise, 6 timed out); state changes go to stderr as they happen.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** Every replica boa asks for runs, and keeps running: the tests end jobs through the API. */
const runsUntilEnded: Executor = {
  kind: 'local',
  reconcile: async (desired: readonly DesiredJob[]) =>
    desired.flatMap((job) =>
      job.replicas.map((r): ReplicaStatus => ({
        jobId: r.jobId,
        generation: r.generation,
        rank: r.rank,
        node: r.node,
        phase: 'running',
      })),
    ),
  close: async () => {},
};

async function service() {
  const s = await startCliService({
    executor: runsUntilEnded,
    config: { local: { bootSeconds: 0, releaseSeconds: 0 } },
  });
  cleanups.push(s.close);
  return s;
}

/** Resolves once `check` holds, polling the in-process service while the CLI child runs. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((wake) => setTimeout(wake, 50));
  }
  throw new Error('condition never held');
}

describe('boa jobs wait', () => {
  it('returns 0 once every job is done, not before, saying so on stderr', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const a = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' })).body;
    const b = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    await s.ticks(1);
    const waiting = s.boa(['jobs', 'wait', 'a', String(b.id), '--interval', '0.1']);
    let ended = false;
    void waiting.then(() => (ended = true));
    await s.request('POST', `/v1/jobs/${a.id}/complete`, undefined, a.token);
    // a is done, b runs: the CLI waits on.
    await new Promise((wake) => setTimeout(wake, 2000));
    expect(ended).toBe(false);
    await s.request('POST', `/v1/jobs/${b.id}/complete`, undefined, b.token);
    const run = await waiting;
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`^job ${a.id} \\(a\\): done$`, 'm'));
    expect(run.stderr).toMatch(new RegExp(`^job ${b.id} \\(cifar10\\): done$`, 'm'));
    const rows = run.stdout.trimEnd().split('\n').slice(1);
    expect(rows.map((row) => row.split(/\s{2,}/)[3])).toEqual(['done', 'done']);
    // What each cost the budget, as the API books it: 0.00 when it never held a GPU.
    expect(run.stdout.split('\n')[0]).toMatch(/\sGPU-h$/);
    const booked = await Promise.all(
      [a.id, b.id].map(async (id) => (await s.request('GET', `/v1/jobs/${id}`)).body.gpuHours as number),
    );
    expect(rows.map((row) => row.split(/\s{2,}/)[5])).toEqual(booked.map((h) => h.toFixed(2)));
  });

  it('says on Ctrl-C that the jobs still open run on, how to wait again and how to cancel (exit 130)', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const a = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' })).body;
    const b = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    await s.request('POST', `/v1/jobs/${a.id}/complete`, undefined, a.token);
    let interrupted = false;
    const run = await s.boa(
      ['jobs', 'wait', String(a.id), String(b.id), '--interval', '0.1'],
      {},
      (stderr, child) => {
        if (!interrupted && stderr.includes(`job ${b.id} (cifar10)`)) {
          interrupted = true;
          child.kill('SIGINT');
        }
      },
    );
    expect(run.status, run.stderr).toBe(130);
    expect(run.stderr).toContain(
      `boa: stopped waiting; job ${b.id} runs on (boa jobs wait ${b.id} waits again, boa jobs cancel ${b.id} stops it)\n`,
    );
    // Waiting cancels nothing.
    expect((await s.request('GET', `/v1/jobs/${b.id}`)).body.state).not.toBe('cancelled');
  });

  it('refuses an --interval that is not a decimal number of seconds from 0.1 to 3600', async () => {
    const s = await service();
    for (const interval of ['0x10', '', '0.05', '4e3']) {
      const run = await s.boa(['jobs', 'wait', '1', '--interval', interval]);
      expect(run.status, interval).toBe(2);
      expect(run.stderr).toContain(
        `--interval must be a number of seconds from 0.1 to 3600, got "${interval}"`,
      );
    }
  });

  it('returns 5 when a job ends otherwise, and 6 when the timeout passes first', async () => {
    const s = await service();
    const job = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    // No budget: the job waits for a plan that never comes.
    const timedOut = await s.boa(['jobs', 'wait', String(job.id), '--timeout', '0.3', '--interval', '0.1']);
    expect(timedOut.status).toBe(6);
    expect(timedOut.stderr).toMatch(new RegExp(`^job ${job.id} \\(cifar10\\): waiting for a plan$`, 'm'));
    expect(timedOut.stderr).toMatch(
      new RegExp(`1 of 1 not finished after 0.3 s: job ${job.id} \\(cifar10\\) waiting$`, 'm'),
    );

    const waiting = s.boa(['jobs', 'wait', String(job.id), '--interval', '0.1', '--json']);
    await s.request('POST', `/v1/jobs/${job.id}/cancel`);
    const cancelled = await waiting;
    expect(cancelled.status).toBe(5);
    expect(JSON.parse(cancelled.stdout)).toMatchObject([{ id: job.id, state: 'cancelled' }]);
    expect(cancelled.stderr).toMatch(/1 of 1 did not finish: \d+ cancelled/);
  });

  it('follows many jobs (read together while active) to their ends', async () => {
    const s = await service();
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id);
    const waiting = s.boa(['jobs', 'wait', ...ids.map(String), '--interval', '0.1', '--json']);
    await new Promise((wake) => setTimeout(wake, 500));
    for (const id of ids) await s.request('POST', `/v1/jobs/${id}/cancel`);
    const run = await waiting;
    expect(run.status).toBe(5);
    const ended = JSON.parse(run.stdout) as Array<{ id: number; state: string }>;
    expect(ended.map((j) => [j.id, j.state])).toEqual(ids.map((id) => [id, 'cancelled']));
  });

  it('refuses a timeout that is not a duration, naming the forms it takes', async () => {
    const s = await service();
    const job = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    const run = await s.boa(['jobs', 'wait', String(job.id), '--timeout', 'soon']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /--timeout must be a positive duration such as 90, 90s, 30m or 2h, got "soon"/,
    );
  });
});

describe('boa jobs submit --wait', () => {
  it('prints the submitted job, then waits for it to end', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const submitting = s.boa([
      'jobs',
      'submit',
      'cifar10',
      '--name',
      'w',
      '--wait',
      '--',
      'node',
      'train.js',
    ]);
    let id = 0;
    await until(async () => {
      const { body } = await s.request('GET', '/v1/jobs?name=w');
      id = body.jobs[0]?.id ?? 0;
      return id > 0;
    });
    await s.request('POST', `/v1/jobs/${id}/cancel`);
    const run = await submitting;
    expect(run.status).toBe(5);
    expect(run.stdout).toMatch(new RegExp(`^job\\s+${id} "w" \\(cifar10, waiting\\)$`, 'm'));
    expect(run.stderr).toMatch(new RegExp(`^job ${id} \\(w\\): cancelled$`, 'm'));
  });

  it('checks --timeout before submitting anything', async () => {
    const s = await service();
    const run = await s.boa([
      'jobs',
      'submit',
      'cifar10',
      '--wait',
      '--timeout',
      'soon',
      '--',
      'node',
      'x.js',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--timeout must be a positive duration/);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });

  it('needs a command: a self-launched job is waited for from its launcher', async () => {
    const s = await service();
    const run = await s.boa(['jobs', 'submit', 'cifar10', '--wait']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--wait needs a command after --/);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });
});
