/**
 * The Node job client (clients/node/boa-job.mjs) from start to stop: its environment and URL checked,
 * the token, the allocation and launch values it reads, a self-launched job's GPUs; then SIGTERM,
 * close(), a new generation, the job completed, and a refused poll (a stop, or under the executor an
 * error).
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BoaConfigError, BoaError, BoaJob } from '../../clients/node/boa-job.mjs';
import { until, watched } from './processes.ts';
import { CLIENT, nodeClientFixture } from './node-client-fixture.ts';

const { boa, clients, answering, executorEnv, client, jobView } = nodeClientFixture();

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
