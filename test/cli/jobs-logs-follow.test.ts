/**
 * `boa jobs logs --follow` against a service running a real local process: the log as it is written,
 * through a restart (the next generation from its start), until the job ends, with the exit code
 * `jobs wait` gives.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startProcessService } from './process-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function serviceRunningProcesses(
  hold?: (request: Request) => Promise<void>,
  config: Record<string, unknown> = {},
) {
  const { s, dataDir } = await startProcessService(
    cleanups,
    { restartBackoffSeconds: 1, ...config },
    { followPollMs: 50 },
    hold,
  );
  /**
   * Ticks the service (its clock a tick on each time) until `until` settles, then gives its outcome;
   * `beforeTick` may hold the clock (a backoff lasts until the tick after it).
   */
  const tickUntil = async <T>(until: Promise<T>, beforeTick?: () => Promise<void>): Promise<T> => {
    let settled = false;
    void until.finally(() => (settled = true));
    for (let i = 0; i < 600 && !settled; i++) {
      await beforeTick?.();
      await s.ticks(1);
      await s.service.execution.settle();
      await new Promise((r) => setTimeout(r, 50));
    }
    return until;
  };
  /**
   * What each generation of the job kept, oldest first, read from the service. Generations are runs
   * after restarts and after rescales alike (a loaded machine rescales some jobs as their nodes come),
   * so their count is not the restarts'; one stopped before its process wrote kept nothing.
   */
  const keptLogs = async (id: number) => {
    const { generation } = (await s.request('GET', `/v1/jobs/${id}`)).body as { generation: number };
    const kept: Array<{ generation: number; text: string }> = [];
    for (let g = 1; g <= generation; g++) {
      const log = await s.request('GET', `/v1/jobs/${id}/logs?generation=${g}&tail=10000`);
      if (log.status === 200 && String(log.body) !== '') kept.push({ generation: g, text: String(log.body) });
    }
    return kept;
  };
  /** Submits a job boa runs: `node -e script`. Its id. */
  const submitScript = async (script: string): Promise<number> => {
    const made = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', script] },
    });
    expect(made.status).toBe(201);
    return made.body.id as number;
  };
  return { s, dataDir, tickUntil, submitScript, keptLogs };
}

it('follows a job from before it starts, through a restart, to its end; exit 0 when it is done', async () => {
  const { s, dataDir, tickUntil, submitScript } = await serviceRunningProcesses();
  const marker = join(dataDir, 'failed-once');
  // The first run writes slowly and fails; the one after it writes and finishes.
  const script = `
    const fs = require('node:fs');
    const again = fs.existsSync(${JSON.stringify(marker)});
    let i = 0;
    const timer = setInterval(() => {
      i += 1;
      console.log((again ? 'second ' : 'first ') + i);
      if (i === 6) {
        clearInterval(timer);
        if (!again) fs.writeFileSync(${JSON.stringify(marker)}, '');
        process.exit(again ? 0 : 1);
      }
    }, 150);`;
  const id = await submitScript(script);
  let saidSoFar = '';
  const following = s.boa(['jobs', 'logs', String(id), '--follow'], {}, (stderr) => (saidSoFar = stderr));
  // The backoff held for longer than the follower's poll (2 s), as a real one (10 s and more) is: 3 s,
  // and on until the follower has said it (30 s at most). A loaded machine's follower, slow to see the
  // run end, missed a fixed 3 s: it then said nothing of the restart.
  let held = false;
  const holdBackoff = async () => {
    if (held || s.service.job(id).restartNotBefore === null) return;
    held = true;
    const since = Date.now();
    const over = () =>
      Date.now() - since >= 3000 && (/ its run ended /.test(saidSoFar) || Date.now() - since >= 30_000);
    while (!over()) await new Promise((r) => setTimeout(r, 50));
  };
  const follow = await tickUntil(following, holdBackoff);
  expect(held).toBe(true);
  expect(existsSync(marker)).toBe(true);
  const lines = follow.stdout.trimEnd().split('\n');
  expect(lines).toEqual(
    [1, 2, 3, 4, 5, 6].map((i) => `first ${i}`).concat([1, 2, 3, 4, 5, 6].map((i) => `second ${i}`)),
  );
  const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
  expect(job.state).toBe('done');
  // The backoff is said: what ended the run, and when the next starts.
  expect(follow.stderr).toMatch(
    new RegExp(`job ${id} \\(cifar10\\): its run ended \\(exit 1: [^)]*\\); restart 1 at `),
  );
  // The run after the restart is announced (an ended job shows the generation after its last run),
  // and how wide it runs, as jobs wait says it.
  expect(follow.stderr).toMatch(new RegExp(`^--- job ${id}, generation \\d+ ---$`, 'm'));
  expect(follow.stderr).toMatch(new RegExp(`^job ${id} \\(cifar10\\): running on \\d+ GPUs?$`, 'm'));
  expect(follow.stderr).toMatch(new RegExp(`job ${id} \\(cifar10\\): done`));
  // Why the first run ended is said before the next run's header (it came after, found in a trial).
  const said = follow.stderr.split('\n');
  const ended = said.findIndex((l) => / its run ended /.test(l));
  const header = said.findIndex((l) => new RegExp(`^--- job ${id}, generation \\d+ ---$`).test(l));
  expect(ended, follow.stderr).toBeGreaterThanOrEqual(0);
  expect(ended, follow.stderr).toBeLessThan(header);
  expect(follow.status).toBe(0);
}, 120_000);

it('ends with exit 5 when the followed job is cancelled, and follows one named generation alone', async () => {
  const { s, tickUntil, submitScript } = await serviceRunningProcesses();
  const script = "let i = 0; setInterval(() => console.log('tick ' + ++i), 100);";
  const id = await submitScript(script);
  const follow = s.boa(['jobs', 'logs', String(id), '-f']);
  // Cancelled once the follower has printed some of what it runs.
  const cancelled = (async () => {
    for (let i = 0; i < 600; i++) {
      const log = await s.request('GET', `/v1/jobs/${id}/logs?tail=10`);
      if (log.status === 200 && /tick 3\n/.test(String(log.body))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return s.request('POST', `/v1/jobs/${id}/cancel`);
  })();
  const [ended] = await tickUntil(Promise.all([follow, cancelled]));
  expect(ended.stdout).toMatch(/^tick 1\ntick 2\ntick 3\n/);
  // With the stopping note when the follower looked before the executor reported the replica gone.
  expect(ended.stderr).toMatch(
    new RegExp(
      `^boa: job ${id} \\(cifar10\\): cancelled(, stopping: \\d+ replicas? still running, .*)?$`,
      'm',
    ),
  );
  expect(ended.status).toBe(5);

  // A generation that ended, named: its log, and no waiting for another.
  const { generation } = (await s.request('GET', `/v1/jobs/${id}`)).body;
  const named = await s.boa([
    'jobs',
    'logs',
    String(id),
    '-f',
    '--generation',
    String(generation - 1),
    '--tail',
    '10000',
  ]);
  expect(named.status).toBe(0);
  expect(named.stdout).toMatch(/tick 3\n/);
}, 120_000);

it('shows the whole output of a job that ran and ended between two of its looks, when it began before the job ran', async () => {
  const { s, tickUntil, submitScript } = await serviceRunningProcesses();
  const id = await submitScript("console.log('all I had to say')");
  // The follower has found the job waiting (no log kept) before the service runs it.
  let waiting!: () => void;
  const seenWaiting = new Promise<void>((resolve) => (waiting = resolve));
  const follow = s.boa(['jobs', 'logs', String(id), '-f'], {}, (stderr) => {
    if (/waiting|queued/.test(stderr)) waiting();
  });
  await seenWaiting;
  const ended = await tickUntil(follow);
  expect(ended.stdout, ended.stderr).toBe('all I had to say\n');
  expect(ended.stderr).toMatch(new RegExp(`job ${id} \\(cifar10\\): done`));
  expect(ended.status).toBe(0);
}, 120_000);

it('follows at most 64 logs at once, each follow counted out as it ends', async () => {
  const { s, submitScript } = await serviceRunningProcesses();
  const forever = "console.log('up'); setInterval(() => {}, 1000);";
  const quick = "console.log('done at once')";
  const jobs = [];
  for (const command of [forever, quick]) {
    jobs.push(await submitScript(command));
  }
  const [running, finishing] = jobs as [number, number];
  const headers = { authorization: `Bearer ${s.token}` };
  const follow = (id: number, signal?: AbortSignal) =>
    fetch(`${s.url}/v1/jobs/${id}/logs?follow=true`, { headers, signal });
  for (let i = 0; i < 100; i++) {
    const logs = await Promise.all(jobs.map((id) => s.request('GET', `/v1/jobs/${id}/logs`)));
    if (logs.every((l) => l.status === 200 && /up|done/.test(String(l.body)))) break;
    await s.ticks(1);
    await s.service.execution.settle();
    await new Promise((r) => setTimeout(r, 50));
  }
  // Followed to its end, 70 times over: each is counted out as it ends.
  for (let i = 0; i < 70; i++) expect(await (await follow(finishing)).text()).toBe('done at once\n');
  const stop = new AbortController();
  const open = [];
  for (let i = 0; i < 64; i++) {
    const res = await follow(running, stop.signal);
    expect(res.status).toBe(200);
    open.push(res);
  }
  const refused = await follow(running);
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_followed_logs');
  stop.abort();
  for (const res of open) await res.body?.cancel().catch(() => undefined);
  let again = await follow(running);
  for (let i = 0; i < 100 && again.status === 429; i++) {
    await new Promise((r) => setTimeout(r, 20));
    again = await follow(running);
  }
  expect(again.status).toBe(200);
  await again.body?.cancel();
}, 120_000);

it("a job's own token follows at most 4 of its logs at once; the operator still follows", async () => {
  const { s, submitScript } = await serviceRunningProcesses();
  const id = await submitScript("console.log('up'); setInterval(() => {}, 1000);");
  for (let i = 0; i < 100; i++) {
    const log = await s.request('GET', `/v1/jobs/${id}/logs`);
    if (log.status === 200 && /up/.test(String(log.body))) break;
    await s.ticks(1);
    await s.service.execution.settle();
    await new Promise((r) => setTimeout(r, 50));
  }
  const jobToken = s.service.jobToken(s.service.state.jobs.get(id)!.tokenSeed!);
  const stop = new AbortController();
  const follow = (token: string) =>
    fetch(`${s.url}/v1/jobs/${id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${token}` },
      signal: stop.signal,
    });
  // HEADs (a monitor checking the URL) take no follow: Hono runs GET for them and drops its body
  // uncancelled, which held a slot for good (found in review: 4 HEADs locked the job out).
  for (let i = 0; i < 5; i++) {
    const head = await fetch(`${s.url}/v1/jobs/${id}/logs?follow=true`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${jobToken}` },
    });
    expect(head.status).toBe(200);
  }
  const open = [];
  for (let i = 0; i < 4; i++) {
    const res = await follow(jobToken);
    expect(res.status).toBe(200);
    open.push(res);
  }
  const refused = await follow(jobToken);
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
    /follows 4 of its logs already/,
  );
  const operator = await follow(s.token);
  expect(operator.status).toBe(200);
  open.push(operator);
  stop.abort();
  for (const res of open) await res.body?.cancel().catch(() => undefined);
}, 120_000);

it('submit --follow: stdout is the job output alone, what was submitted goes to stderr, exit as the job ends', async () => {
  const { s, tickUntil, keptLogs } = await serviceRunningProcesses();
  // One write: a generation boa stops (a rescale as nodes come, on a loaded machine) could otherwise be
  // killed between two lines and keep only the first (seen once in CI).
  const script = "process.stdout.write('epoch 1\\nepoch 2\\n'); process.exit(3)";
  const run = await tickUntil(
    s.boa(['jobs', 'submit', 'cifar10', '--name', 'followed', '-f', '--', process.execPath, '-e', script]),
  );
  // Each run's output, its restarts' too (each announced on stderr).
  const kept = await keptLogs(1);
  expect(kept.length).toBeGreaterThanOrEqual(2);
  for (const { text } of kept) expect(text).toBe('epoch 1\nepoch 2\n');
  expect(run.stdout).toBe(kept.map(({ text }) => text).join(''));
  expect(run.stderr).toMatch(/^job\s+1 "followed" \(cifar10, waiting\)$/m);
  expect(run.stderr).toMatch(/^token\s+\S+$/m);
  expect(run.stderr).toMatch(/job 1 \(followed\): failed \(exit 3/);
  expect(run.status).toBe(5);

  const refused = await s.boa(['jobs', 'submit', 'cifar10', '-f', '--wait', '--', 'true']);
  expect(refused.status).toBe(2);
  expect(refused.stderr).toContain('--follow prints the job');
  expect((await s.request('GET', '/v1/jobs?limit=10')).body.jobs).toHaveLength(1);
}, 120_000);

it('follow says each restart and each generation once, however long the backoff it polls through', async () => {
  const { s, tickUntil } = await serviceRunningProcesses();
  const script = "console.log('run'); process.exit(3)";
  const held = new Set<number>();
  const run = await tickUntil(
    s.boa(['jobs', 'submit', 'cifar10', '--name', 'looping', '-f', '--', process.execPath, '-e', script]),
    async () => {
      // Each backoff held for 1.5 s of the follower's 50 ms polls before the tick that ends it.
      const job = s.service.state.jobs.get(1);
      if (job?.restartNotBefore && !held.has(job.generation)) {
        held.add(job.generation);
        await new Promise((r) => setTimeout(r, 1500));
      }
    },
  );
  expect(run.status).toBe(5);
  expect(held.size).toBeGreaterThan(0);
  const lines = run.stderr.split('\n');
  const count = (said: RegExp) => lines.filter((l) => said.test(l));
  for (const said of [/^--- job 1, generation \d+ ---$/, /restart \d+ at /]) {
    expect(new Set(count(said)).size, run.stderr).toBe(count(said).length);
  }
  // Its width once a generation at most (the same width again is a new generation's).
  const generations = count(/^--- job 1, generation \d+ ---$/).length + 1;
  expect(count(/running on \d+ GPU/).length, run.stderr).toBeLessThanOrEqual(generations);
}, 120_000);

it('submit --follow shows the runs that ended before its first look at the log, each from its start', async () => {
  // The follower's log requests wait until the job has run and failed twice (a loaded machine).
  let twiceFailed!: () => void;
  const failedTwice = new Promise<void>((resolve) => (twiceFailed = resolve));
  const { s, tickUntil, keptLogs } = await serviceRunningProcesses(async (request) => {
    if (new URL(request.url).pathname.endsWith('/logs')) await failedTwice;
  });
  // Rank 0 fails each run; the other ranks wait to be stopped. All failing at once, rank 0 could be
  // stopped by another rank's failure before it printed (a loaded machine), its run's log empty.
  const script =
    "console.log('run starts'); if (process.env.NODE_RANK === '0') process.exit(3); setInterval(() => {}, 1000)";
  const run = await tickUntil(
    s.boa(['jobs', 'submit', 'cifar10', '-f', '--', process.execPath, '-e', script]),
    async () => {
      const job = await s.request('GET', '/v1/jobs/1');
      if (job.status === 200 && job.body.restarts >= 2) twiceFailed();
    },
  );
  const kept = await keptLogs(1);
  expect(kept.filter(({ generation }) => generation <= 2)).toHaveLength(2);
  expect(run.stdout).toBe(kept.map(({ text }) => text).join(''));
  expect(run.stdout).toBe('run starts\n'.repeat(kept.length));
  for (const { generation } of kept.slice(1))
    expect(run.stderr).toContain(`--- job 1, generation ${generation} ---`);
  expect(run.status).toBe(5);
}, 120_000);

it("submit --follow of a job that failed on a rank it did not follow names that rank's output (found in a trial)", async () => {
  const { s, tickUntil } = await serviceRunningProcesses(undefined, { maxRestarts: 0 });
  const script =
    "if (process.env.NODE_RANK === '1') process.exit(7); console.log('rank 0 runs'); setInterval(() => {}, 1000)";
  const run = await tickUntil(
    s.boa(['jobs', 'submit', 'cifar10', '-f', '--', process.execPath, '-e', script]),
  );
  expect(run.status).toBe(5);
  // With the stopping note when the follower looked before the executor reported the other ranks gone
  // (their processes exit on SIGTERM; boa notices at its next pass: seen in CI on a loaded machine,
  // with 1 and with 3 of them still running).
  expect(run.stderr).toMatch(
    /job 1 \(cifar10\): failed \(exit 7: rank 1 exited 7 \(after 0 restarts\)\)(, stopping: \d+ replicas? still running, [^;\n]*)?; its output: boa jobs logs 1 --rank 1\n/,
  );
}, 120_000);

it('goes on from the byte it got to when its connection to boa breaks: nothing lost, nothing twice', async () => {
  const { s, dataDir, tickUntil, submitScript } = await serviceRunningProcesses();
  const release = join(dataDir, 'go-on');
  // Writes 5 lines, waits for the test, writes 5 more and ends.
  const script = `
    const fs = require('node:fs');
    for (let i = 1; i <= 5; i++) console.log('line ' + i);
    const wait = setInterval(() => {
      if (!fs.existsSync(${JSON.stringify(release)})) return;
      clearInterval(wait);
      for (let i = 6; i <= 10; i++) console.log('line ' + i);
    }, 50);`;
  const id = await submitScript(script);
  let cut = false;
  const follow = s.boa(['jobs', 'logs', String(id), '-f'], {}, (stderr) => {
    if (!cut && /broke off/.test(stderr)) cut = true;
  });
  const driving = (async () => {
    // Once the follower has shown the first five lines (the API's own view of the log says they are
    // written), its connection is dropped; then the job writes the rest.
    for (let i = 0; i < 600; i++) {
      const log = await s.request('GET', `/v1/jobs/${id}/logs?tail=10`);
      if (log.status === 200 && /line 5\n/.test(String(log.body))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1500));
    // Cut again until the follower says it broke off: a CLI slow to start under load may not have
    // connected at the first cut (seen in a loaded run).
    for (let i = 0; i < 60 && !cut; i++) {
      s.cutConnections();
      for (let j = 0; j < 25 && !cut; j++) await new Promise((r) => setTimeout(r, 20));
    }
    writeFileSync(release, '');
    // Then it is cancelled: the follower ends with it.
    await new Promise((r) => setTimeout(r, 1500));
    await s.request('POST', `/v1/jobs/${id}/cancel`);
  })();
  const [ended] = await tickUntil(Promise.all([follow, driving]));
  expect(cut).toBe(true);
  expect(ended.stderr).toContain('following it again from where it was');
  expect(ended.stdout).toBe(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(''));
}, 120_000);

it('refuses what it cannot follow: --json, a rank the running job has no replica of', async () => {
  const { s, tickUntil, submitScript } = await serviceRunningProcesses();
  const id = await submitScript("console.log('up'); setInterval(() => {}, 1000)");
  // A cursor this service's executor did not give: said, naming the field.
  const bad = await s.request('GET', `/v1/jobs/${id}/logs?follow=true&cursor=2026-11-30T11:08:23Z/1`);
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: 'bad_log_cursor', field: 'cursor' });
  expect(bad.body.error.message).toContain(`a local log's cursor is "start" or one it gave, e.g. h1024`);
  const json = await s.boa(['jobs', 'logs', String(id), '-f', '--json']);
  expect(json.status).toBe(2);
  expect(json.stderr).toContain('without --json');
  await tickUntil(
    (async () => {
      for (let i = 0; i < 600 && s.service.job(id).state !== 'running'; i++)
        await new Promise((r) => setTimeout(r, 50));
    })(),
  );
  const replicas = new Set(s.service.job(id).allocation).size;
  const rank = await s.boa(['jobs', 'logs', String(id), '-f', '--rank', String(replicas)]);
  expect(rank.status).toBe(2);
  expect(rank.stderr).toContain(`--rank ${replicas} is none of them`);
}, 120_000);
