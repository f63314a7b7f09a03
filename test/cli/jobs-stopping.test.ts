/**
 * A cancelled job whose replica ignores SIGTERM runs on for its grace: `boa jobs list`, `jobs show`, the
 * API and `jobs wait` say its replica still runs and the GPUs it holds, until it is gone (a review saw
 * "cancelled, 0 GPUs" while the process ran on for the whole 120 s).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { oneNodeLocalService } from '../helpers/one-node-local-service.ts';
import { runStubbornJob } from '../helpers/stubborn-job.ts';
import { until } from '../helpers/until.ts';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

// Long enough for two CLI runs (a second or two each on a loaded machine) within it.
const GRACE_SECONDS = 15;

/** Whether the process runs (a zombie has ended). */
function runs(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('a cancelled job whose replica still stops', () => {
  it('is shown stopping, with the GPUs it holds, and jobs wait returns only once its replica is gone', async () => {
    const { s, dataDir } = await oneNodeLocalService(startCliService, {
      graceSeconds: GRACE_SECONDS,
      prefix: 'boa-cli-stopping-',
      cleanups,
    });
    const { id, pid } = await runStubbornJob(s, join(dataDir, 'a.pid'), 'stubborn');
    const width = s.service.job(id).width;
    expect(width).toBeGreaterThan(0);

    const waiting = s.boa(['jobs', 'wait', 'stubborn', '--interval', '0.2']);
    let waitEnded: number | undefined;
    let runningAtWaitEnd: boolean | undefined;
    void waiting.then(() => {
      waitEnded = Date.now();
      runningAtWaitEnd = runs(pid);
    });
    const cancelAt = Date.now();
    expect((await s.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    let view: any;
    await until('the stop sent', async () => {
      view = (await s.request('GET', `/v1/jobs/${id}`)).body;
      return typeof view.stopping?.killAt === 'string';
    });
    expect(view.state).toBe('cancelled');
    expect(view.width).toBe(0);
    expect(view.stopping).toMatchObject({ replicas: 1, gpus: width });
    const killAt = Date.parse(view.stopping.killAt);
    expect(killAt).toBeGreaterThanOrEqual(cancelAt + GRACE_SECONDS * 1000 - 1000);
    // The SIGTERM went at the cancel, not at the executor's next check (replicaCheckSeconds, 5 s).
    expect(killAt).toBeLessThanOrEqual(cancelAt + GRACE_SECONDS * 1000 + 1500);
    expect(runs(pid)).toBe(true);

    const list = await s.boa(['jobs', 'list', '--state', 'cancelled']);
    expect(list.status).toBe(0);
    const row = list.stdout.split('\n').find((line) => line.includes('stubborn'));
    expect(row).toContain(`0+${width} stopping`);
    expect(row).toMatch(
      new RegExp(`stopping: 1 replica still running, ${width} GPUs? held \\(SIGKILL in \\d+ s\\)`),
    );
    const show = await s.boa(['jobs', 'show', 'stubborn']);
    expect(show.stdout).toMatch(/state\s+cancelled: stopping: 1 replica still running/);
    expect(show.stdout).toMatch(new RegExp(`GPUs\\s+0\\+${width} stopping`));

    // Not while the replica runs: it waits, saying why.
    const done = await waiting;
    expect(runningAtWaitEnd).toBe(false);
    expect(done.status).toBe(5);
    expect(done.stderr).toMatch(
      /job \d+ \(stubborn\): cancelled, stopping: 1 replica still running, .* \(SIGKILL at /,
    );
    expect(waitEnded!).toBeGreaterThanOrEqual(killAt - 1000); // ended by the SIGKILL, not before
    await until('the view without it', async () => {
      view = (await s.request('GET', `/v1/jobs/${id}`)).body;
      return view.stopping === null;
    });
  }, 60_000);
});
