import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  BoaConfigError,
  BoaError,
  BoaHTTPError,
  BoaJob,
  BoaUnavailable,
} from '../../clients/node/boa-job.mjs';
import { killLeftovers, until, watched } from './processes.ts';
import { mutedWarnings } from './node-clients.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

const CLIENT = resolve(import.meta.dirname, '../../clients/node/boa-job.mjs');

const { boa, clients } = servedBoaForFile();
const strangers: Server[] = [];
afterEach(async () => {
  killLeftovers();
  for (const server of strangers.splice(0)) {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
});

/** A port nothing listens on (until a test puts something there). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

/** Something other than boa at BOA_URL (a proxy, another service) answering every request with
 * `status` and the JSON `body`; stopped after the test. Returns its URL. */
async function stranger(status: number, body: unknown, port = 0): Promise<string> {
  return answering(() => [status, body], port);
}

/** A server answering each request with `answer()`'s status and JSON body; stopped after the test. */
async function answering(answer: () => [number, unknown], port = 0): Promise<string> {
  const server = createHttpServer((_req, res) => {
    const [status, body] = answer();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  strangers.push(server);
  await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** boa at a second address: a server passing every request on to it; stopped after the test. */
async function forwarding(): Promise<{ url: string; server: Server; seen: string[] }> {
  const seen: string[] = [];
  const server = createHttpServer(async (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const body: Buffer[] = [];
    for await (const chunk of req) body.push(chunk as Buffer);
    const answer = await fetch(boa.url + req.url, {
      method: req.method,
      headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
      body: body.length > 0 ? Buffer.concat(body) : undefined,
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  strangers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

/** A BOA_URL_FILE holding `url`, as boa's local executor writes one; removed after the test. */
function urlFile(url: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-url-file-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, '0.url');
  writeFileSync(file, `${url}\n`);
  return file;
}

function executorEnv(job: TestJob): Record<string, string> {
  return {
    BOA_URL: boa.url,
    BOA_JOB_ID: String(job.id),
    BOA_JOB_TOKEN: job.token,
    BOA_GENERATION: String(job.generation),
    WORLD_SIZE: String(job.width),
    NNODES: '1',
    NODE_RANK: '0',
    NPROC_PER_NODE: String(job.width),
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: '29500',
  };
}

function client(job: TestJob, options: Record<string, unknown> = {}) {
  const made = BoaJob.fromEnv(executorEnv(job), {
    pollSeconds: 0.05,
    backoffSeconds: 0.05,
    handleSigterm: false,
    ...options,
  });
  clients.push(made);
  return made;
}

const jobView = async (job: TestJob): Promise<any> =>
  (await fetch(`${boa.url}/v1/jobs/${job.id}`, { headers: { authorization: `Bearer ${job.token}` } })).json();

describe('Node job client (clients/node/boa-job.mjs)', () => {
  it('names the missing environment variables', () => {
    expect(() => BoaJob.fromEnv({})).toThrow(BoaConfigError);
    expect(() => BoaJob.fromEnv({})).toThrow(/BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN/);
    expect(() => BoaJob.fromEnv({ BOA_URL: boa.url, BOA_JOB_ID: '3' })).toThrow(/variable BOA_JOB_TOKEN:/);
    expect(() =>
      BoaJob.fromEnv({ BOA_URL: boa.url, BOA_JOB_ID: '3', BOA_JOB_TOKEN: 't', BOA_GENERATION: 'x' }),
    ).toThrow('BOA_GENERATION must be an integer, got "x"');
  });

  it('refuses a URL that is not an absolute http:// or https:// URL at once, naming it', () => {
    // Every request to it would fail like a boa restarting, retried for ever with nothing said.
    const env = { BOA_URL: '127.0.0.1:8080', BOA_JOB_ID: '12', BOA_JOB_TOKEN: 'x' };
    expect(() => BoaJob.fromEnv(env)).toThrow(BoaConfigError);
    expect(() => BoaJob.fromEnv(env)).toThrow(
      'BOA_URL must be an absolute http:// or https:// URL such as http://127.0.0.1:8080, got ' +
        '"127.0.0.1:8080": it has no scheme (did you mean "http://127.0.0.1:8080"?)',
    );
    const made = (url: string) => () => new BoaJob({ url, jobId: 1, token: 't', handleSigterm: false });
    for (const [url, problem] of [
      ['localhost:8080', /^url must be .* got "localhost:8080": it has no scheme/],
      ['ftp://boa:21', /its scheme is ftp:\/\//],
      ['http:/boa:8080', /must be followed by \/\//],
      ['http://:8080', /it has no host/],
      ['http://boa:99999', /its port is not a number from 1 to 65535/],
      ['http://boa:80a', /its port is not a number/],
      ['http://boa:8080/?x=1', /a query or fragment/],
      ['http://user:pw@boa:8080', /a user or password/],
      ['http://boa :8080', /whitespace/],
    ] as const)
      expect(made(url), url).toThrow(problem);
    for (const url of ['http://127.0.0.1:8080', 'HTTPS://boa.example:8443/prefix/', 'http://[::1]:8080'])
      expect(made(url)).not.toThrow();
  });

  it('reads the allocation and the launch environment', async () => {
    const job = await boa.makeJob();
    const c = client(job);
    const alloc = await c.allocation();
    expect(alloc).toMatchObject({
      jobId: job.id,
      state: 'running',
      width: job.width,
      generation: job.generation,
    });
    expect(alloc.nodes.reduce((n, x) => n + x.gpus, 0)).toBe(job.width);
    expect([c.worldSize, c.nnodes, c.nodeRank, c.masterPort, c.checkpointDir]).toEqual([
      job.width,
      1,
      0,
      29500,
      null,
    ]);
    expect(c.shouldStop()).toBe(false);
    // Rank 1 of a 3 + 1 placement: its worker is global rank 3, not NODE_RANK * NPROC_PER_NODE = 1.
    const second = {
      ...executorEnv(job),
      NNODES: '2',
      NODE_RANK: '1',
      NPROC_PER_NODE: '1',
      BOA_FIRST_RANK: '3',
    };
    expect(BoaJob.fromEnv(second, { handleSigterm: false }).firstRank).toBe(3);
    expect(c.firstRank).toBe(0);
  });

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

  it('refuses a waitForWidth timeout that is no number from 0, before it waits', async () => {
    const job = await boa.makeJob();
    const c = BoaJob.fromEnv(executorEnv(job), { handleSigterm: false });
    clients.push(c);
    // "abc" made the deadline NaN: the wait never timed out.
    for (const timeout of ['abc', '10', -1, Number.NaN])
      await expect(c.waitForWidth(timeout as number)).rejects.toThrow(
        /^timeoutSeconds must be a number from 0, got /,
      );
  });

  it('takes a token read with its newline, and refuses one no header can carry without showing it', async () => {
    const job = await boa.makeJob();
    const env = { ...executorEnv(job), BOA_JOB_TOKEN: `${job.token}\n` };
    const c = BoaJob.fromEnv(env, { handleSigterm: false });
    clients.push(c);
    expect((await c.report(1)).statEpoch).toBe(1);
    const refused = (() => {
      try {
        return BoaJob.fromEnv(
          { ...env, BOA_JOB_TOKEN: `${job.token.slice(0, 8)} x` },
          { handleSigterm: false },
        );
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(BoaConfigError);
    expect((refused as Error).message).not.toContain(job.token.slice(0, 8));
  });

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

  it('turns shouldStop on at SIGTERM, and the process lives on to checkpoint', async () => {
    const job = await boa.makeJob();
    const script = `
      import { BoaJob } from ${JSON.stringify(CLIENT)};
      const job = BoaJob.fromEnv();
      console.log('ready ' + job.shouldStop());
      const timer = setInterval(() => {
        if (!job.shouldStop()) return;
        console.log('stopping: ' + job.stopReason);
        clearInterval(timer);
        // A SIGTERM is never cleared, not even by reading a running allocation again; and as with an
        // ended job, waitForWidth hands back no GPUs the job would at once stop on again (docs/client.md).
        job.waitForWidth(1).then(
          () => console.log('after waitForWidth: GPUs handed back'),
          (error) => console.log('after waitForWidth: ' + error.message),
        ).finally(() => {
          console.log('then: ' + job.shouldStop() + ' ' + job.stopReason);
          job.close();
        });
      }, 10);`;
    const child = watched(process.execPath, ['--input-type=module', '-e', script], executorEnv(job));
    await child.waitFor(/ready/);
    expect(child.output()).toContain('ready false');
    child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('stopping: SIGTERM');
    expect(child.output()).toContain(`after waitForWidth: job ${job.id} stopped for good (SIGTERM)`);
    expect(child.output()).toContain('then: true SIGTERM');
  });

  it('ends a wait for GPUs at SIGTERM, at once, and the process exits by itself', async () => {
    // The listener replaces Node's default exit: a self-launched job waiting for width 0 used to
    // ignore SIGTERM until its timeout, or its SIGKILL.
    const job = await boa.makeJob(false);
    const script = `
      import { BoaJob } from ${JSON.stringify(CLIENT)};
      const job = BoaJob.fromEnv(process.env, { pollSeconds: 60 });
      job.allocation().then(() => {
        console.log('waiting, generation ' + job.generation);
        return job.waitForWidth(120);
      }).then(
        (alloc) => console.log('width ' + alloc.width),
        (error) => console.log(error.name + ': ' + error.message + ', stop reason ' + job.stopReason),
      ).finally(() => job.close());`;
    const env = { BOA_URL: boa.url, BOA_JOB_ID: String(job.id), BOA_JOB_TOKEN: job.token };
    const child = watched(process.execPath, ['--input-type=module', '-e', script], env);
    await child.waitFor(/waiting, generation null/);
    await new Promise((r) => setTimeout(r, 300)); // in its 60 s pause between polls
    const signalled = Date.now();
    child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    // Not at the next poll, nor held open by the pause's timer. The pause is long so that a loaded
    // machine's slow exit (seconds) fits below the bound: a 5 s pause and a 2 s bound left little room.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(child.output()).toContain('BoaError: SIGTERM while waiting for GPUs, stop reason SIGTERM');
  });

  it('a SIGTERM ends a report retrying against an unreachable boa, at once: the grace is for the checkpoint', async () => {
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => done(port));
      });
    });
    const script = `
      import { BoaJob } from ${JSON.stringify(CLIENT)};
      const job = BoaJob.fromEnv(process.env, { backoffSeconds: 60, maxBackoffSeconds: 60 });
      job.shouldStop(); // its loop looks (one that never does ends at SIGTERM, as without the client)
      console.log('reporting');
      job.report(1).then(() => console.log('report returned, stop reason ' + job.stopReason))
        .finally(() => job.close());`;
    const env = {
      BOA_URL: `http://127.0.0.1:${port}`,
      BOA_JOB_ID: '3',
      BOA_JOB_TOKEN: 'tok',
      BOA_GENERATION: '1',
      WORLD_SIZE: '1',
    };
    const child = watched(process.execPath, ['--input-type=module', '-e', script], env);
    await child.waitFor(/reporting/);
    await new Promise((r) => setTimeout(r, 500)); // refused, in its 30-60 s wait before the retry
    const signalled = Date.now();
    child.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    // Not after the wait: bounded well below its 30 s, as a loaded machine's exit can take seconds.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(child.output()).toContain('report returned, stop reason SIGTERM');
  });

  it('after a SIGTERM, a request to a boa that never answers gives up after 2 s, not its 10 s timeout', async () => {
    // A cancel check after the SIGTERM (as docs/client.md advises) held the checkpoint up for
    // timeoutSeconds: 10 s of torchrun's 30 (found in review).
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket)); // takes the connection, never answers
    onTestFinished(() => {
      for (const socket of held) socket.destroy();
      silent.close();
    });
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const script = `
      import { BoaJob } from ${JSON.stringify(CLIENT)};
      const job = BoaJob.fromEnv(process.env, { retries: 0 });
      job.shouldStop(); // its loop looks (one that never does ends at SIGTERM, as without the client)
      process.kill(process.pid, 'SIGTERM');
      setTimeout(async () => {
        const started = Date.now();
        const error = await job.allocation().catch((e) => e);
        console.log(job.stopReason + ': ' + error.reason + ' after ' + (Date.now() - started) + ' ms');
        job.close();
      }, 50);`;
    const env = {
      BOA_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      BOA_JOB_ID: '3',
      BOA_JOB_TOKEN: 'tok',
      BOA_GENERATION: '1',
    };
    const child = watched(process.execPath, ['--input-type=module', '-e', script], env);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const ms = /SIGTERM: timed out after 2 s after (\d+) ms/.exec(child.output())?.[1];
    expect(Number(ms ?? Infinity), child.output()).toBeLessThan(4000);
  });

  it('ends a wait for GPUs at close(), at once', async () => {
    const job = await boa.makeJob(false);
    const c = new BoaJob({
      url: boa.url,
      jobId: job.id,
      token: job.token,
      pollSeconds: 5,
      handleSigterm: false,
    });
    const waiting = c.waitForWidth(60).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    const closed = Date.now();
    c.close();
    expect(await waiting).toMatchObject({ message: 'client closed while waiting for GPUs' });
    expect(Date.now() - closed).toBeLessThan(1000);
  });

  it('turns shouldStop on when boa gives the job a new generation', async () => {
    const job = await boa.makeJob();
    const c = client(job).startPolling();
    await new Promise((r) => setTimeout(r, 300));
    expect(c.shouldStop()).toBe(false);
    expect(c.pollError).toBeNull();
    await c.report(job.rescaleEpoch);
    expect(c.shouldStop()).toBe(false);
    await boa.ticks(3);
    expect(await until(() => c.shouldStop())).toBe(true);
    expect(c.stopReason).toMatch(/new generation/);
    expect(c.lastAllocation?.generation).toBeGreaterThan(job.generation);
    expect(c.lastAllocation?.width).toBe(job.widths[job.rescaleEpoch]);
  });

  it('completes the job', async () => {
    const job = await boa.makeJob();
    const c = client(job);
    expect((await c.complete()).state).toBe('done');
    expect((await jobView(job)).state).toBe('done');
    expect(c.shouldStop()).toBe(true);
    expect((await c.complete()).state).toBe('done');
    expect((await c.allocation()).width).toBe(0);
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

  it("a self-launched job's launch values stay those of the generation it runs until it stops", async () => {
    let paused = false;
    const url = await answering(() =>
      paused
        ? [200, { jobId: 3, state: 'waiting', width: 0, nodes: [], generation: 2, statEpoch: 0 }]
        : [
            200,
            {
              jobId: 3,
              state: 'running',
              width: 2,
              nodes: [{ node: 'n1', gpus: 2 }],
              generation: 1,
              statEpoch: 0,
            },
          ],
    );
    const c = BoaJob.fromEnv(
      { BOA_URL: url, BOA_JOB_ID: '3', BOA_JOB_TOKEN: 'tok' },
      { pollSeconds: 0.05, backoffSeconds: 1, handleSigterm: false },
    );
    clients.push(c);
    await c.waitForWidth();
    c.startPolling();
    paused = true; // boa pauses the job: the next poll sees width 0 and generation 2
    expect(await until(() => c.shouldStop())).toBe(true);
    // The generation still running (it checkpoints and stops next) was started on 2 GPUs.
    expect([c.generation, c.worldSize, c.nnodes, c.nprocPerNode]).toEqual([1, 2, 1, 2]);
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

  it('a self-launched job stopped by a refused poll is not handed GPUs again by waitForWidth', async () => {
    // A stranger at BOA_URL for one poll (a restart, a reused port), boa again after it.
    let gets = 0;
    const url = await answering(() => {
      gets += 1;
      return gets === 2
        ? [404, { error: { code: 'not_found', message: 'no such job' } }]
        : [200, { jobId: 3, state: 'running', width: 2, nodes: [], generation: 1, statEpoch: 0 }];
    });
    const c = BoaJob.fromEnv(
      { BOA_URL: url, BOA_JOB_ID: '3', BOA_JOB_TOKEN: 'tok' },
      { pollSeconds: 0.05, backoffSeconds: 1, handleSigterm: false },
    );
    clients.push(c);
    expect(await c.waitForWidth()).toMatchObject({ width: 2 });
    c.startPolling();
    expect(await until(() => c.shouldStop())).toBe(true);
    expect(c.stopReason).toMatch(/404/);
    // Handed GPUs while shouldStop() stays true, a job that resumes on them would stop again at once,
    // in a loop: the wait says the job stopped instead.
    await expect(c.waitForWidth()).rejects.toThrow(/stopped for good/);
    expect(c.shouldStop()).toBe(true);
  });

  it('under the executor a refused poll is an error, not a stop: rank 0 exiting 0 would mark the job done', async () => {
    const job = await boa.makeJob();
    const c = client({ ...job, token: 'not-the-job-token-0123456789' }, { backoffSeconds: 1 });
    boa.takeRequests();
    c.startPolling();
    // The poll goes on after the refusals, and nothing tells the job to stop.
    let polls = 0;
    const count = () => (polls += boa.takeRequests()[`GET /v1/jobs/${job.id}/allocation`] ?? 0);
    expect(await until(() => count() >= 3)).toBe(true);
    expect(c.pollError).toMatchObject({ status: 401 });
    expect(c.shouldStop()).toBe(false);
    expect(c.stopReason).toBeNull();
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

  it("gives a self-launched job its placement's nodes and GPUs from the allocation, as the executor's environment would", async () => {
    const allocation = {
      jobId: 1,
      state: 'running',
      width: 6,
      generation: 2,
      statEpoch: 0,
      nodes: [
        { node: 'a', gpus: 4 },
        { node: 'b', gpus: 2 },
      ],
    };
    const url = await answering(() => [200, allocation]);
    const placed = (env: Record<string, string>) =>
      new BoaJob({ url, jobId: 1, token: 't', handleSigterm: false, env });
    const first = placed({});
    await first.allocation();
    expect([first.worldSize, first.nnodes, first.nprocPerNode, first.firstRank]).toEqual([6, 2, 4, 0]);
    const second = placed({ NODE_RANK: '1' });
    await second.allocation();
    expect([second.nnodes, second.nprocPerNode, second.firstRank]).toEqual([2, 2, 4]);
    // The environment, when set, wins.
    const set = placed({ NNODES: '1', NPROC_PER_NODE: '6' });
    await set.allocation();
    expect([set.nnodes, set.nprocPerNode]).toEqual([1, 6]);
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

  it('lets a self-launched job wait for GPUs and follow rescales', async () => {
    const job = await boa.makeJob(false);
    const c = new BoaJob({
      url: boa.url,
      jobId: job.id,
      token: job.token,
      pollSeconds: 0.05,
      handleSigterm: false,
      env: {},
    });
    clients.push(c);
    expect(c.generation).toBeNull();
    const noGpus = await c.waitForWidth(0.2).catch((e: unknown) => e);
    expect(noGpus).toBeInstanceOf(BoaError);
    expect((noGpus as Error).message).toMatch(/got no GPUs within 0.2 s/);
    const waiting = c.waitForWidth(10);
    await boa.ticks(3);
    const got = await waiting;
    expect(got.width).toBeGreaterThan(0);
    expect(c.generation).toBe(got.generation);
    expect(c.worldSize).toBe(got.width);
    c.startPolling();
    await c.report(job.rescaleEpoch);
    await boa.ticks(3);
    expect(await until(() => c.shouldStop())).toBe(true);
    const again = await c.waitForWidth(5);
    expect(c.shouldStop()).toBe(false);
    expect(again.generation).toBeGreaterThan(got.generation);
    expect(c.generation).toBe(again.generation);
  });
});
