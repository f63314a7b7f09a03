/**
 * The Node job client (clients/node/boa-job.mjs) through an outage: retries, a moved boa
 * (BOA_URL_FILE), a page that is not boa's, and waits for GPUs that go on or end.
 */
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { BoaError, BoaHTTPError, BoaJob, BoaUnavailable } from '../../clients/node/boa-job.mjs';
import { until } from './processes.ts';
import { mutedWarnings } from './node-clients.ts';
import { freePort, nodeClientFixture, urlFile } from './node-client-fixture.ts';

const { boa, clients, stranger, forwarding, executorEnv, client, jobView } = nodeClientFixture();

describe('Node job client (clients/node/boa-job.mjs)', () => {
  it('moves to the address BOA_URL_FILE names when BOA_URL stops answering (boa restarted elsewhere)', async () => {
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const old = await forwarding();
    const file = urlFile(old.url);
    // fromEnv's env: boa's local executor gives BOA_URL and BOA_URL_FILE.
    const moving = BoaJob.fromEnv(
      { ...executorEnv(job), BOA_URL: old.url, BOA_URL_FILE: file },
      { pollSeconds: 0.05, backoffSeconds: 0.05, handleSigterm: false, retries: 2 },
    );
    clients.push(moving);
    expect((await moving.report(0, 1)).statEpoch).toBe(0);
    expect(old.seen).toEqual([`POST /v1/jobs/${job.id}/progress`]);
    // boa stops answering at the old address, and is restarted at another, which it writes to the file.
    old.server.closeAllConnections();
    await new Promise((closed) => old.server.close(closed));
    writeFileSync(file, `${boa.url}/\n`);
    boa.takeRequests();
    expect(await moving.report(1)).toMatchObject({ statEpoch: 1 });
    expect(moving.url).toBe(boa.url);
    expect(boa.takeRequests()).toEqual({ [`POST /v1/jobs/${job.id}/progress`]: 1 });
    expect(await jobView(job)).toMatchObject({ statEpoch: 1 });
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      `boa job ${job.id}: boa moved from ${old.url} to ${boa.url} (BOA_URL_FILE); reporting there`,
    ]);
  });

  it('does not move for a BOA_URL_FILE naming no valid URL, nor for a url given to the constructor', async () => {
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const away = `http://127.0.0.1:${await freePort()}`;
    const bad = BoaJob.fromEnv(
      { ...executorEnv(job), BOA_URL: away, BOA_URL_FILE: urlFile('127.0.0.1:8080') },
      { backoffSeconds: 0.01, handleSigterm: false, retries: 1 },
    );
    const given = new BoaJob({
      url: away,
      jobId: job.id,
      token: job.token,
      env: { BOA_URL_FILE: urlFile(boa.url) },
      backoffSeconds: 0.01,
      handleSigterm: false,
      retries: 1,
    });
    clients.push(bad, given);
    for (const c of [bad, given]) {
      await expect(c.allocation()).rejects.toThrow(BoaUnavailable);
      expect(c.url).toBe(away);
    }
    expect(warn).not.toHaveBeenCalled();
  });

  it('retries a 5xx a bounded number of times, and a 429 after its Retry-After', async () => {
    const job = await boa.makeJob();
    const key = `GET /v1/jobs/${job.id}/allocation`;
    boa.takeRequests();
    boa.failNext(2, 503);
    expect((await client(job).allocation()).width).toBe(job.width);
    expect(boa.takeRequests()).toEqual({ [key]: 3 });
    boa.failNext(10, 500);
    await expect(client(job, { retries: 2 }).allocation()).rejects.toMatchObject({ status: 500 });
    expect(boa.takeRequests()).toEqual({ [key]: 3 });
    // 429 asks to wait: retried after Retry-After (1 s), not the 0.05 s backoff.
    boa.failNext(1, 429, 1);
    const started = Date.now();
    expect((await client(job).allocation()).width).toBe(job.width);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(boa.takeRequests()).toEqual({ [key]: 2 });
  });

  // A JSON object that is no allocation read as "new generation undefined": the replica stopped, exited 0,
  // and was taken for the job done (found in review).
  it.each(['<html>not boa</html>', '{"status":"ok","not":"boa"}'])(
    'takes a 200 that is no allocation (not boa at BOA_URL: %s) for a BoaError, and polls on',
    async (page) => {
      const server = createHttpServer((_req, res) => res.end(page));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const { port } = server.address() as AddressInfo;
        const c = new BoaJob({
          url: `http://127.0.0.1:${port}`,
          jobId: 1,
          token: 't',
          generation: 1,
          pollSeconds: 0.05,
          handleSigterm: false,
        });
        clients.push(c);
        const error = await c.allocation().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(BoaError);
        expect((error as Error).message).toMatch(/unexpected answer .*not.*boa/);
        c.startPolling();
        expect(await until(() => c.pollError instanceof BoaError)).toBe(true);
        expect(c.shouldStop()).toBe(false);
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    },
  );

  it('waits for GPUs through an outage of boa (5xx, then unreachable), as through a width of 0', async () => {
    // boa restarting outlasts the retries of one poll; the wait ends only with the job or the timeout.
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    boa.takeRequests();
    boa.failNext(7, 503);
    const options = { pollSeconds: 0.05, retries: 1, backoffSeconds: 0.05, handleSigterm: false, env: {} };
    const c = new BoaJob({ url: boa.url, jobId: job.id, token: job.token, ...options });
    clients.push(c);
    expect((await c.waitForWidth(30)).width).toBe(job.width);
    // Four polls of two attempts: seven 503s, then the allocation.
    expect(boa.takeRequests()).toEqual({ [`GET /v1/jobs/${job.id}/allocation`]: 8 });
    const port = await freePort();
    const back = { jobId: 1, state: 'running', width: 2, nodes: [], generation: 3, statEpoch: 0 };
    setTimeout(() => void stranger(200, back, port), 1000);
    const again = new BoaJob({ url: `http://127.0.0.1:${port}`, jobId: 1, token: 't', ...options });
    clients.push(again);
    expect(await again.waitForWidth(30)).toEqual(back);
    // Each outage said once (the 5xx, then the port nothing listened on for a second).
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringMatching(/answered 503 injected/),
      expect.stringMatching(/is not reachable \(ECONNREFUSED\)/),
    ]);
  });

  it('says so while boa stays unreachable or failing during a wait for GPUs: at once, then at most every warnEverySeconds', async () => {
    // A wrong BOA_URL (a port nothing listens on) fails like a boa restarting, which is waited out: the
    // wait used to look like one for GPUs, for ever.
    const warn = mutedWarnings();
    const url = `http://127.0.0.1:${await freePort()}`;
    const options = { pollSeconds: 0.02, retries: 0, handleSigterm: false, env: {} };
    const wrong = new BoaJob({ url, jobId: 12, token: 't', warnEverySeconds: 0.3, ...options });
    clients.push(wrong);
    const started = Date.now();
    await expect(wrong.waitForWidth(1)).rejects.toThrow(/no GPUs within 1 s/);
    const seconds = (Date.now() - started) / 1000;
    const said = warn.mock.calls.map((call) => String(call[0]));
    expect(said[0]).toBe(
      `boa job 12: boa at ${url} is not reachable (ECONNREFUSED); retrying while waiting for GPUs (is BOA_URL right?)`,
    );
    // Dozens of polls, a few lines: one at once, then one per 0.3 s at most.
    expect(said.length).toBeGreaterThanOrEqual(2);
    expect(said.length).toBeLessThanOrEqual(Math.floor(seconds / 0.3) + 1);
    warn.mockClear();
    // By default once a minute: one line for this whole wait.
    const quiet = new BoaJob({ url, jobId: 12, token: 't', ...options });
    clients.push(quiet);
    await expect(quiet.waitForWidth(0.5)).rejects.toThrow(/no GPUs within/);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockClear();
    // boa there but failing (5xx) is said too, in its own words.
    const job = await boa.makeJob();
    boa.failNext(3, 503);
    const failing = new BoaJob({ url: boa.url, jobId: job.id, token: job.token, ...options });
    clients.push(failing);
    expect((await failing.waitForWidth(10)).width).toBe(job.width);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toBe(
      `boa job ${job.id}: boa at ${boa.url} answered 503 injected: injected by the test; retrying while waiting for GPUs`,
    );
  });

  it('still ends a wait for GPUs at a refusal (4xx) or the timeout', async () => {
    mutedWarnings();
    const job = await boa.makeJob(false);
    const options = { pollSeconds: 0.05, retries: 0, handleSigterm: false, env: {} };
    const refused = new BoaJob({
      url: boa.url,
      jobId: job.id,
      token: 'not-the-job-token-0123456789',
      ...options,
    });
    clients.push(refused);
    boa.takeRequests();
    await expect(refused.waitForWidth(30)).rejects.toMatchObject({ status: 401 });
    expect(boa.takeRequests()).toEqual({ [`GET /v1/jobs/${job.id}/allocation`]: 1 });
    const unreachable = new BoaJob({
      url: `http://127.0.0.1:${await freePort()}`,
      jobId: 1,
      token: 't',
      ...options,
    });
    clients.push(unreachable);
    await expect(unreachable.waitForWidth(0.5)).rejects.toThrow(
      /no GPUs within 0.5 s \(last poll: boa at .* not reachable/,
    );
  });

  it('polls on through any error, and warns of an unexpected one', async () => {
    const c = new BoaJob({
      url: await stranger(502, { error: 'boa is restarting' }),
      jobId: 1,
      token: 't',
      generation: 1,
      retries: 0,
      pollSeconds: 0.05,
      handleSigterm: false,
    });
    clients.push(c);
    c.startPolling();
    expect(await until(() => c.pollError instanceof BoaHTTPError)).toBe(true);
    expect(c.pollError).toMatchObject({ detail: 'boa is restarting' });
    // Anything but a BoaError is a bug of the client's: a warning, then the poll goes on.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      c.allocation = () => Promise.reject(new TypeError('a bug'));
      expect(await until(() => warn.mock.calls.length > 0)).toBe(true);
      expect(String(warn.mock.calls[0]?.[1])).toBe('TypeError: a bug');
      expect(c.pollError).toBeInstanceOf(TypeError);
    } finally {
      warn.mockRestore();
      delete (c as { allocation?: unknown }).allocation;
    }
    expect(await until(() => c.pollError instanceof BoaHTTPError)).toBe(true);
    expect(c.shouldStop()).toBe(false);
  });

  it('gives up on an unreachable service after its retries', async () => {
    const c = new BoaJob({
      url: `http://127.0.0.1:${await freePort()}`,
      jobId: 1,
      token: 't',
      retries: 3,
      backoffSeconds: 0.05,
      handleSigterm: false,
    });
    const started = Date.now();
    const error = await c.allocation().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoaUnavailable);
    expect((error as Error).message).toMatch(/not reachable after 4 attempts: ECONNREFUSED$/);
    expect(error).toMatchObject({ reason: 'ECONNREFUSED' });
    // Waits of 0.05, 0.1 and 0.2 s at most: bounded, no endless loop.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
