import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { BoaConfigError, BoaJob, BoaUnavailable } from '../../clients/node/boa-job.mjs';
import { hasPython, killLeftovers, runPythonTests, until } from './processes.ts';
import { mutedWarnings, quickClient } from './node-clients.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

// The job clients' failure-mode review: a job's own values, boa's answers and the machine around it, as
// a training job meets them. Each case is held for both clients (parity); the Python client's are in
// clients/python/tests/test_failure_review.py, run at the end.

const { boa, clients } = servedBoaForFile();
const servers: { server: Server; sockets: Set<Socket> }[] = [];
afterEach(async () => {
  killLeftovers();
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise((closed) => server.close(closed));
  }
});

/**
 * A server (a proxy gone wrong) that answers a byte every 200 ms for a minute: its headers, or after
 * them its body. Every read gets a byte well within a client's timeout. Returns its URL.
 */
async function dripping(part: 'headers' | 'body'): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', () => {
      if (part === 'body')
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 300\r\n\r\n');
      else socket.write('HTTP/1.1 200 OK\r\nx-slow: ');
      const timer = setInterval(() => socket.writable && socket.write(' '), 200);
      setTimeout(() => clearInterval(timer), 60_000).unref();
      socket.on('close', () => {
        clearInterval(timer);
        sockets.delete(socket);
      });
    });
  });
  servers.push({ server, sockets });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const client = (job: TestJob, options: Record<string, unknown> = {}) =>
  quickClient(boa, clients, job, options);

const posts = (job: TestJob) => boa.takeRequests()[`POST /v1/jobs/${job.id}/progress`] ?? 0;
const warned = (warn: ReturnType<typeof mutedWarnings>) => warn.mock.calls.map((call) => String(call[0]));

describe('Node job client: what the training code gives report()', () => {
  it('does not send an epoch boa would refuse, nor keep it in place of one kept in an outage', async () => {
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job);
    const most = (await c.allocation()).statEpochs - 1;
    boa.failNext(2, 503); // the report and its one retry
    await c.report(2); // kept, to send again
    posts(job);
    warn.mockClear();
    // Still down: each of these, sent, failed too and replaced the report kept (2.5 and most + 1 are not
    // below 2), which boa then refused: epoch 2 was lost. A BigInt failed in JSON.stringify, which the
    // client took for boa unreachable: retried, then kept.
    boa.failNext(10, 503);
    for (const bad of [2.5, most + 1, -1, '3', 3n])
      expect(await c.report(bad as number)).toEqual(c.lastAllocation);
    expect(posts(job)).toBe(0);
    const prefix = `boa job ${job.id}: progress report not taken, training goes on: statEpoch must be an integer from 0 to ${most}, got`;
    expect(warned(warn)).toEqual([
      `${prefix} 2.5: nothing sent`,
      `${prefix} ${most + 1}: nothing sent`,
      `${prefix} -1: nothing sent`,
      `${prefix} "3": nothing sent`,
      `${prefix} 3: nothing sent`,
    ]);
    boa.failNext(0);
    c.startPolling();
    expect(await until(() => boa.job(job.id).statEpoch === 2)).toBe(true);
  });

  it('leaves out a work figure that is no number and reports the epoch', async () => {
    // boa refused the whole report for a string, epoch and all; the Python client's float() raised.
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job);
    expect((await c.report(1, '3.5' as unknown as number)).statEpoch).toBe(1);
    expect(boa.job(job.id).statEpoch).toBe(1);
    expect(warned(warn)).toEqual([
      `boa job ${job.id}: workDoneSeconds must be a number from 0 to 1000000000, got "3.5": statEpoch 1 reported without it`,
    ]);
    expect((await c.report(2, 7)).statEpoch).toBe(2);
    expect(boa.job(job.id).workDoneSeconds).toBe(7);
  });
});

describe('Node job client: a job id, generation or option no request can work with', () => {
  const made = (options: Record<string, unknown>) => () =>
    new BoaJob({ url: boa.url, jobId: 3, token: 't', handleSigterm: false, ...options });
  const env = (more: Record<string, string>) => () =>
    BoaJob.fromEnv(
      { BOA_URL: boa.url, BOA_JOB_ID: '3', BOA_JOB_TOKEN: 't', ...more },
      { handleSigterm: false },
    );

  it('is refused when the client is made, naming it and what is allowed', () => {
    // Before: jobId "abc" requested /v1/jobs/NaN, BOA_JOB_ID=0 or -3 reached boa as a refused job, a
    // negative retries retried for ever, pollSeconds 0 polled boa in a busy loop, a timeout of 0 failed
    // every request as "unreachable".
    const cases: [() => unknown, string][] = [
      [made({ jobId: 'abc' }), 'jobId must be a whole number from 1, got "abc"'],
      [made({ jobId: 1.5 }), 'jobId must be a whole number from 1, got 1.5'],
      [made({ generation: -1 }), 'generation must be a whole number from 0, got -1'],
      [env({ BOA_JOB_ID: '0' }), 'BOA_JOB_ID must be a whole number from 1, got 0'],
      [env({ BOA_JOB_ID: '-3' }), 'BOA_JOB_ID must be a whole number from 1, got -3'],
      [env({ BOA_GENERATION: '-1' }), 'BOA_GENERATION must be a whole number from 0, got -1'],
      [made({ retries: -1 }), 'retries must be a whole number from 0, got -1'],
      [made({ pollSeconds: 0 }), 'pollSeconds must be a number above 0, got 0'],
      [made({ timeoutSeconds: Number.NaN }), 'timeoutSeconds must be a number above 0, got NaN'],
      [made({ backoffSeconds: -1 }), 'backoffSeconds must be a number from 0, got -1'],
      [made({ warnEverySeconds: '60' }), 'warnEverySeconds must be a number from 0, got "60"'],
    ];
    for (const [make, message] of cases) {
      expect(make).toThrow(BoaConfigError);
      expect(make).toThrow(message);
    }
    // What was taken still is: a string of digits, 0 retries, no warning spacing.
    const c = made({ jobId: '3', generation: '0', retries: 0, warnEverySeconds: 0 })();
    clients.push(c as BoaJob);
    expect([(c as BoaJob).jobId, (c as BoaJob).generation]).toEqual([3, 0]);
  });
});

describe('Node job client: a Retry-After not above 0', () => {
  it('is waited as the backoff, not taken for no wait (as the Python client now does)', async () => {
    const job = await boa.makeJob();
    const c = client(job, { backoffSeconds: 1 });
    boa.failNext(1, 503, -5);
    const started = performance.now();
    await c.allocation(); // the 503, then its retry, taken
    expect(performance.now() - started).toBeGreaterThanOrEqual(500); // the backoff's least, with jitter
  });
});

describe('Node job client: an answer that never ends', () => {
  it.each(['headers', 'body'] as const)(
    'a request answered a byte at a time (%s) gives up at its timeout, not when the server stops',
    async (part) => {
      const c = new BoaJob({
        url: await dripping(part),
        jobId: 1,
        token: 't',
        timeoutSeconds: 1,
        retries: 0,
        handleSigterm: false,
      });
      clients.push(c);
      const started = performance.now();
      const error = await c.allocation().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(BoaUnavailable);
      expect((error as BoaUnavailable).reason).toBe('timed out after 1 s');
      expect(performance.now() - started).toBeLessThan(10_000);
    },
  );
});

describe('Node job client: the wall clock stepped back (NTP, a VM resumed)', () => {
  /** Date.now from here on, moved by `skew` ms (the client under test must not care). */
  function steppableClock() {
    const realNow = Date.now.bind(Date);
    const clock = { skew: 0 };
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + clock.skew);
    onTestFinished(() => spy.mockRestore());
    return clock;
  }

  it('neither holds a wait for GPUs past its timeout nor silences the warnings for the step', async () => {
    // Python's client reads time.monotonic; Node's read Date.now, and waited an hour more.
    const warn = mutedWarnings();
    const job = await boa.makeJob(false); // waiting: width 0
    const c = client(job, { warnEverySeconds: 0.3 });
    const clock = steppableClock();
    const started = performance.now();
    const waiting = c.waitForWidth(0.5).then(
      () => null,
      (e: unknown) => e,
    );
    clock.skew = -3_600_000;
    const settled = await Promise.race([
      waiting,
      new Promise((r) => setTimeout(() => r('still waiting'), 15_000)),
    ]);
    expect(String(settled)).toMatch(/got no GPUs within 0.5 s/);
    expect(performance.now() - started).toBeLessThan(15_000);

    await c.report(Number.NaN); // warned, nothing sent
    clock.skew -= 3_600_000;
    await new Promise((r) => setTimeout(r, 400));
    await c.report(Number.NaN); // warnEverySeconds later: warned again
    expect(warned(warn).filter((line) => /must be a finite number/.test(line))).toHaveLength(2);
  });
});

describe.skipIf(!hasPython)('Python job client: the same cases', () => {
  it('passes test_failure_review.py against a real boa service', { timeout: 180_000 }, async () => {
    const result = await runPythonTests('test_failure_review', boa.url);
    expect(result.status).toBe(0);
    expect(result.out).toMatch(/Ran 5 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
