/**
 * A replica that ignores SIGTERM runs on for its whole grace after its job is cancelled: the GPUs it
 * holds must not go to another job until it is gone (two processes on the same GPUs; a job booked
 * running whose replica the executor holds back), and that job must start at the next tick once it is.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { oneNodeLocalService } from '../helpers/one-node-local-service.ts';
import { runStubbornJob } from '../helpers/stubborn-job.ts';
import { until } from '../helpers/until.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const GRACE_SECONDS = 3;

describe('a cancelled replica still stopping, on the local executor', () => {
  it("holds its node's GPUs from another job until it is gone, which then starts at a tick asked for at once", async () => {
    const marks = mkdtempSync(join(tmpdir(), 'boa-stopping-marks-'));
    cleanups.push(() => rmSync(marks, { recursive: true, force: true }));
    // One node: the second job can only go where the first one's replica still runs.
    const { s } = await oneNodeLocalService(startService, {
      graceSeconds: GRACE_SECONDS,
      prefix: 'boa-stopping-',
      cleanups,
    });
    const aPid = join(marks, 'a.pid');
    const bStarted = join(marks, 'b');
    const a = await runStubbornJob(s, aPid);
    const aNodes = [...s.service.job(a.id).allocation];
    expect(aNodes.length).toBeGreaterThan(0);
    const cancelAt = Date.now();
    expect((await s.request('POST', `/v1/jobs/${a.id}/cancel`)).status).toBe(200);
    // At its start, whether a's process still runs (a zombie has ended), and when.
    const b = await s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: {
        command: [
          'sh',
          '-c',
          `st=$(cut -d' ' -f3 /proc/$(cat ${aPid})/stat 2>/dev/null); ` +
            `if [ -n "$st" ] && [ "$st" != Z ]; then r=overlap; else r=alone; fi; ` +
            `echo "$r $(date +%s%3N)" > ${bStarted}.tmp; mv ${bStarted}.tmp ${bStarted}; exec sleep 60`,
        ],
      },
    });
    expect(b.status).toBe(201);
    await s.ticks(1);
    // Not given the GPUs a's replica still holds: it waits, saying for what.
    expect(s.service.job(b.body.id).state).toBe('waiting');
    expect(s.service.job(b.body.id).allocation).toEqual([]);
    expect((await s.request('GET', `/v1/jobs/${b.body.id}`)).body.waitingFor).toBe('stopping');
    // The service's loop (main.ts) ticks when asked: at once, not up to tickSeconds after a is gone.
    let asked = 0;
    s.scheduler.tickWanted = () => void (asked += 1);
    const aGone = () => !s.service.state.liveReplicas.some((r) => r.jobId === a.id);
    await until("job a's replica gone", aGone, (GRACE_SECONDS + 10) * 1000);
    const goneAt = Date.now();
    expect(asked).toBe(1);
    await s.ticks(1);
    const jobB = s.service.job(b.body.id);
    expect(jobB.state).toBe('running');
    expect(new Set(jobB.allocation)).toEqual(new Set(aNodes));
    await until('job b started', () => existsSync(bStarted), 10_000);
    const [seen, at] = readFileSync(bStarted, 'utf8').trim().split(' ');
    expect(seen).toBe('alone');
    // a's replica ran its grace (SIGKILL GRACE_SECONDS after the stop); b started only after it was gone.
    expect(goneAt - cancelAt).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000 - 100);
    expect(Number(at)).toBeGreaterThanOrEqual(goneAt - 1000);
  });
});
