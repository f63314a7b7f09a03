/**
 * The Node job client's (clients/node/boa-job.mjs) progress reports: what boa does not take is said,
 * the generation sent with each, a bad token, redirected POSTs and errors that are plain strings.
 */
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BoaHTTPError, BoaJob } from '../../clients/node/boa-job.mjs';
import { until } from './processes.ts';
import { mutedWarnings } from './node-clients.ts';
import { freePort, nodeClientFixture } from './node-client-fixture.ts';

const { boa, clients, strangers, stranger, executorEnv, client, jobView } = nodeClientFixture();

describe('Node job client (clients/node/boa-job.mjs)', () => {
  it('reports progress; a report boa does not take is said, not thrown, and training goes on; a refused job is thrown', async () => {
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job);
    expect((await c.report(0, 12.5)).statEpoch).toBe(0);
    expect((await jobView(job)).workDoneSeconds).toBe(12.5);
    const last = await c.report(1);
    expect(await jobView(job)).toMatchObject({ statEpoch: 1, workDoneSeconds: 0 });
    boa.takeRequests();
    // An epoch below the last (a restart without a checkpoint): refused by boa (409), not retried,
    // said once, and the last allocation seen returned.
    expect(await c.report(0)).toEqual(last);
    expect(boa.takeRequests()).toEqual({ [`POST /v1/jobs/${job.id}/progress`]: 1 });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(
      new RegExp(
        `^boa job ${job.id}: progress report not taken, training goes on: .*already in statistical epoch 1`,
      ),
    );
    // Not an integer: sent as given, refused (400); said at most every warnEverySeconds (60 s here).
    expect(await c.report(1.5)).toEqual(last);
    expect(warn).toHaveBeenCalledTimes(1);
    // boa unreachable (a restart outlasting the retries): the same.
    const away = new BoaJob({
      url: `http://127.0.0.1:${await freePort()}`,
      jobId: job.id,
      token: job.token,
      retries: 0,
      handleSigterm: false,
      env: {},
    });
    clients.push(away);
    expect(await away.report(2)).toEqual({});
    expect(String(warn.mock.calls.at(-1)?.[0])).toMatch(/progress report not taken.*not reachable/);
    // A wrong token is the job refused: thrown.
    const wrong = new BoaJob({
      url: boa.url,
      jobId: job.id,
      token: 'not-the-token',
      handleSigterm: false,
      env: {},
    });
    clients.push(wrong);
    await expect(wrong.report(2)).rejects.toMatchObject({ status: 401 });
    // The job ended (cancelled here): not thrown, but shouldStop() says so, as a poll would.
    const cancelled = await fetch(`${boa.url}/v1/jobs/${job.id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${job.token}` },
    });
    expect(cancelled.status).toBe(200);
    expect(c.shouldStop()).toBe(false);
    expect(await c.report(2)).toMatchObject({ state: 'cancelled', width: 0 });
    expect(c.shouldStop()).toBe(true);
    // In a poll's words (the report's answer, read once more), as a loop that polls would see it.
    expect(c.stopReason).toBe('job cancelled');
  });

  it('names a NaN or infinity it will not send; a bad work figure does not lose the epoch (found in a trial)', async () => {
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job, { warnEverySeconds: 0 });
    await c.report(0, 3);
    expect((await c.report(1, Number.NaN)).statEpoch).toBe(1);
    expect((await c.report(2, Number.NEGATIVE_INFINITY)).statEpoch).toBe(2);
    boa.takeRequests();
    const last = await c.report(Number.NaN, 5);
    await c.report(Number.POSITIVE_INFINITY);
    // Nothing sent.
    expect(boa.takeRequests()).toEqual({});
    expect(last.statEpoch).toBe(2);
    expect(await jobView(job)).toMatchObject({ statEpoch: 2, workDoneSeconds: 0 });
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      `boa job ${job.id}: workDoneSeconds must be a finite number, got NaN: statEpoch 1 reported without it`,
      `boa job ${job.id}: workDoneSeconds must be a finite number, got -Infinity: statEpoch 2 reported without it`,
      `boa job ${job.id}: progress report not taken, training goes on: statEpoch must be a finite number, got NaN: nothing sent`,
      `boa job ${job.id}: progress report not taken, training goes on: statEpoch must be a finite number, got Infinity: nothing sent`,
    ]);
    // Found in review: boa refuses a report whose work is below 0 or above 1e9 whole (400), epoch and all.
    warn.mockClear();
    expect((await c.report(3, -0.25)).statEpoch).toBe(3);
    expect((await c.report(4, 2e9)).statEpoch).toBe(4);
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      `boa job ${job.id}: workDoneSeconds must be a number from 0 to 1000000000, got -0.25: statEpoch 3 reported without it`,
      `boa job ${job.id}: workDoneSeconds must be a number from 0 to 1000000000, got 2000000000: statEpoch 4 reported without it`,
    ]);
  });

  it('treats a bad token as an error, not a retry loop', async () => {
    const job = await boa.makeJob();
    const c = client({ ...job, token: 'not-the-job-token-0123456789' }, { backoffSeconds: 1 });
    boa.takeRequests();
    const refused = await c.allocation().catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(boa.takeRequests()).toEqual({ [`GET /v1/jobs/${job.id}/allocation`]: 1 });
    // Self-launched, the background poll gives up on it, says why, and asks no more.
    const env = executorEnv({ ...job, token: 'not-the-job-token-0123456789' });
    delete env.BOA_GENERATION;
    const selfLaunched = BoaJob.fromEnv(env, { pollSeconds: 0.05, backoffSeconds: 1, handleSigterm: false });
    clients.push(selfLaunched);
    selfLaunched.startPolling();
    expect(await until(() => selfLaunched.shouldStop())).toBe(true);
    expect(selfLaunched.stopReason).toMatch(/401/);
    await new Promise((r) => setTimeout(r, 200));
    expect(boa.takeRequests()).toEqual({ [`GET /v1/jobs/${job.id}/allocation`]: 1 });
  });

  it("sends the generation its replica runs with each report (a stale one then times no epoch), and the report's place among its client's", async () => {
    const bodies: unknown[] = [];
    const server = createHttpServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        if (req.method === 'POST') bodies.push(JSON.parse(text));
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ jobId: 3, state: 'running', width: 2, nodes: [], generation: 4, statEpoch: 2 }),
          );
      });
    });
    strangers.push(server);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = BoaJob.fromEnv(
      { BOA_URL: url, BOA_JOB_ID: '3', BOA_JOB_TOKEN: 'tok', BOA_GENERATION: '4', WORLD_SIZE: '2' },
      { handleSigterm: false },
    );
    clients.push(c);
    await c.report(2, 10);
    await c.report(2, 20);
    const sequence = (number: number) => ({ sender: expect.stringMatching(/^[0-9a-f]{16}$/), number });
    expect(bodies).toEqual([
      { statEpoch: 2, workDoneSeconds: 10, generation: 4, sequence: sequence(1) },
      { statEpoch: 2, workDoneSeconds: 20, generation: 4, sequence: sequence(2) },
    ]);
    // One sender: boa compares a report's number with those it took from the same one.
    expect((bodies[1] as { sequence: object }).sequence).toMatchObject({
      sender: (bodies[0] as { sequence: { sender: string } }).sequence.sender,
    });
  });

  it('sends a redirected POST again with its body on a 307 or 308, and names any other redirect of it (found in review)', async () => {
    // fetch turned a 301/302 POST into a GET, whose 404 ("no route GET") report() threw as the job
    // refused, crashing a training loop written as the docs show.
    const seen: [string, string, unknown, string | undefined][] = [];
    const server = createHttpServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const path = req.url ?? '';
      seen.push([req.method ?? '', path, text ? JSON.parse(text) : null, req.headers.authorization]);
      // /r307/v1/... answers 307 to /v1/... here; /away/v1/... 307 to another host
      const rest = path.replace(/^\/[^/]+/, '');
      if (path.startsWith('/r')) return res.writeHead(Number(path.slice(2, 5)), { location: rest }).end();
      if (path.startsWith('/away'))
        return res.writeHead(307, { location: `http://127.0.0.2:9${rest}` }).end();
      if (req.method === 'GET' && !path.endsWith('/allocation'))
        return res.writeHead(404).end(JSON.stringify({ error: { code: 'not_found', message: 'no route' } }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ jobId: 1, state: 'running', width: 2, nodes: [], generation: 1, statEpoch: 3 }),
        );
    });
    strangers.push(server);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const here = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const made = (prefix: string) => {
      const c = new BoaJob({
        url: here + prefix,
        jobId: 1,
        token: 'JOB-TOKEN',
        generation: 1,
        handleSigterm: false,
        retries: 0,
      });
      clients.push(c);
      return c;
    };
    for (const code of [307, 308]) {
      seen.length = 0;
      const c = made(`/r${code}`);
      expect((await c.report(3, 1.5)).statEpoch).toBe(3);
      expect((await c.complete()).state).toBe('running');
      // Sent again, it is the same report: numbered the same.
      const body = {
        statEpoch: 3,
        workDoneSeconds: 1.5,
        generation: 1,
        sequence: { sender: expect.any(String), number: 1 },
      };
      expect(seen.slice(0, 2)).toEqual([
        ['POST', `/r${code}/v1/jobs/1/progress`, body, 'Bearer JOB-TOKEN'],
        ['POST', '/v1/jobs/1/progress', body, 'Bearer JOB-TOKEN'],
      ]);
      expect(seen[3]?.slice(0, 2)).toEqual(['POST', '/v1/jobs/1/complete']);
    }
    const warn = mutedWarnings();
    for (const code of [301, 302, 303]) {
      seen.length = 0;
      const c = made(`/r${code}`);
      // A report is said and training goes on (no "job refused"); complete() rejects with it.
      expect(await c.report(3)).toEqual({});
      expect(warn.mock.lastCall?.[0]).toContain(
        `boa answered ${code} redirect_not_followed: POST ${here}/r${code}/v1/jobs/1/progress was ` +
          `redirected to ${here}/v1/jobs/1/progress; not followed: a ${code} turns the POST into a GET`,
      );
      await expect(c.complete()).rejects.toMatchObject({ status: code, code: 'redirect_not_followed' });
      expect(seen.map(([method, path]) => [method, path])).toEqual([
        ['POST', `/r${code}/v1/jobs/1/progress`],
        ['POST', `/r${code}/v1/jobs/1/complete`],
      ]);
    }
    // A 307 to another host is not followed: the token goes to BOA_URL's host only.
    await expect(made('/away').complete()).rejects.toThrow(
      /307 redirect_not_followed: .*to http:\/\/127\.0\.0\.2:9\/v1\/jobs\/1\/complete; .*another host/,
    );
  });

  it('takes an error whose "error" is a string (a proxy, another framework) for a BoaHTTPError with that message', async () => {
    const notFound = new BoaJob({
      url: await stranger(404, { statusCode: 404, error: 'Not Found' }),
      jobId: 1,
      token: 't',
      generation: 1,
      handleSigterm: false,
    });
    const refused = await notFound.report(2, 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BoaHTTPError);
    expect(refused).toMatchObject({ status: 404, code: 'http_error', detail: 'Not Found' });
    const restarting = new BoaJob({
      url: await stranger(502, { error: 'boa is restarting' }),
      jobId: 1,
      token: 't',
      generation: 1,
      retries: 1,
      backoffSeconds: 0.01,
      handleSigterm: false,
    });
    await expect(restarting.allocation()).rejects.toThrow('boa answered 502 http_error: boa is restarting');
  });
});
