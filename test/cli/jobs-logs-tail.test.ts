/**
 * `boa jobs logs` without --follow: the last lines of a replica's log (--tail, --rank, --generation),
 * and why there are none when there are none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';
import { startProcessService, untilLog } from './process-service.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it("prints the last lines a job's replica wrote (--tail, --generation), and says why when there are none", async () => {
    const { s } = await startProcessService(cleanups);
    const print = "for (let i = 1; i <= 5; i++) console.log('line ' + i); setInterval(() => {}, 1000);";
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', print] },
    });
    const waiting = await s.boa(['jobs', 'logs', String(body.id)]);
    expect(waiting.status).toBe(1);
    expect(waiting.stderr).toContain(
      `job ${body.id} has no log kept for rank 0: it has not run yet (it waits for GPUs: boa jobs show ${body.id})`,
    );
    const dropped = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', '0'] },
    });
    expect((await s.request('POST', `/v1/jobs/${dropped.body.id}/cancel`)).status).toBe(200);
    expect((await s.boa(['jobs', 'logs', String(dropped.body.id)])).stderr).toContain(
      `job ${dropped.body.id} has no log kept for rank 0: it never ran (cancelled before it had GPUs)`,
    );

    await untilLog(s, body.id, 'rank=0&tail=2', (text) => text === 'line 4\nline 5\n');
    const logs = await s.boa(['jobs', 'logs', String(body.id), '--tail', '2']);
    expect(logs.stdout).toBe('line 4\nline 5\n');
    expect(logs.status).toBe(0);
    const generation = (await s.request('GET', `/v1/jobs/${body.id}`)).body.generation;
    // --json: the lines with the run they are from, one document (it printed the bare log).
    const json = await s.boa(['--json', 'jobs', 'logs', String(body.id), '--tail', '2']);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ job: body.id, rank: 0, generation, text: 'line 4\nline 5\n' });
    // A rank the job does not run now: the ranks it runs are named.
    const ranks = (await s.request('GET', `/v1/jobs/${body.id}/allocation`)).body.nodes.length as number;
    const named = ranks === 1 ? 'rank 0 only' : `ranks 0 to ${ranks - 1}`;
    expect((await s.boa(['jobs', 'logs', String(body.id), '--rank', '9'])).stderr).toContain(
      `no log kept for rank 9: it runs ${named} now (generation ${generation}; an older generation's: --generation)`,
    );
    const api = await fetch(`${s.url}/v1/jobs/${body.id}/logs?tail=1`, {
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(await api.text()).toBe('line 5\n');
    expect(api.headers.get('boa-generation')).toBe(String(generation));
    const none = await s.boa(['jobs', 'logs', String(body.id), '--generation', String(generation + 5)]);
    expect(none.stderr).toContain(
      `no log kept for generation ${generation + 5}, rank 0: its newest generation is ${generation} (a later one begins at its next restart or rescale)\n`,
    );
    // The job's own token reads its logs; another job's token does not.
    const other = await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    const own = await s.request('GET', `/v1/jobs/${body.id}/logs?tail=1`, undefined, body.token);
    expect(own.status).toBe(200);
    expect((await s.request('GET', `/v1/jobs/${body.id}/logs`, undefined, other.body.token)).status).toBe(
      401,
    );
    // A job that launches itself has no log here, and is told why.
    const selfLaunched = await s.boa(['jobs', 'logs', String(other.body.id)]);
    expect(selfLaunched.stderr).toContain('launches itself (it was submitted without a command)');
    const bad = await s.boa(['jobs', 'logs', String(body.id), '--tail', '0']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/tail/);
    // A replica that has written nothing: an empty stdout, and stderr says so.
    const quiet = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] },
    });
    for (let i = 0; i < 100; i++) {
      if ((await s.request('GET', `/v1/jobs/${quiet.body.id}/logs`)).status === 200) break;
      await s.ticks(1);
      await s.service.execution.settle();
      await new Promise((r) => setTimeout(r, 50));
    }
    const silent = await s.boa(['jobs', 'logs', String(quiet.body.id)]);
    expect(silent).toMatchObject({ status: 0, stdout: '' });
    expect(silent.stderr).toBe(`boa: job ${quiet.body.id}'s rank 0 has written nothing yet\n`);

    // Ended, it holds no GPUs to say how many replicas it ran: the ranks whose logs are kept say it.
    expect((await s.request('POST', `/v1/jobs/${body.id}/cancel`)).status).toBe(200);
    expect((await s.boa(['jobs', 'logs', String(body.id), '--rank', '9'])).stderr).toContain(
      `no log kept for rank 9: generation ${generation}, its newest with a log, has the logs of ${named}`,
    );
    const asked = await s.boa([
      'jobs',
      'logs',
      String(body.id),
      '--rank',
      '9',
      '--generation',
      String(generation),
    ]);
    expect(asked.stderr).toContain(
      `no log kept for generation ${generation}, rank 9: generation ${generation} has the logs of ${named}`,
    );
    const ended = (await s.request('GET', `/v1/jobs/${body.id}`)).body.generation;
    const past = await s.boa(['jobs', 'logs', String(body.id), '--generation', String(ended + 1)]);
    expect(past.stderr).toContain(
      `no log kept for generation ${ended + 1}, rank 0: it has ended (cancelled), and generation ${generation} is its newest with a log of rank 0\n`,
    );

    // A service that runs no jobs keeps no logs.
    const plain = await startCliService();
    cleanups.push(plain.close);
    const registered = await plain.request('POST', '/v1/jobs', { class: 'cifar10' });
    const refused = await plain.boa(['jobs', 'logs', String(registered.body.id)]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('this service runs no jobs (no executor)');
  });
});
