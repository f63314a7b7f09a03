/**
 * `boa jobs submit` and `cancel`: what submit says (a name taken, no budget yet), the job token it
 * prints, and the verbs that point at cancel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';
import { rows } from './table-rows.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('says at submit when another waiting or running job has the name, and submits all the same', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    expect((await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'first'])).stderr).toBe(
      '',
    );
    const again = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'first']);
    expect(again.status).toBe(0);
    expect(again.stderr).toBe(
      'boa: job 1 (waiting) is also named "first": while both are active, commands take their ids, not the name\n',
    );
    // Once the first is cancelled, the name is the second's alone: nothing to say.
    expect((await s.boa(['jobs', 'cancel', '1'])).status).toBe(0);
    expect((await s.boa(['jobs', 'submit', 'bert', '--self-launched', '--name', 'other'])).stderr).toBe('');
    expect((await s.boa(['jobs', 'show', 'first'])).status).toBe(0);
  });

  it('submits, lists and cancels a job; the printed token is the job token', async () => {
    const s = await startCliService();
    cleanups.push(s.close);

    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'resnet18']);
    expect(submit.stderr).toBe('');
    expect(submit.status).toBe(0);
    // The name given shown with the id, to recognise the job by.
    expect(submit.stdout).toMatch(/^job\s+\d+ "resnet18" \(cifar10, waiting\)$/m);
    const id = Number(/^job\s+(\d+) "resnet18" \(cifar10, waiting\)$/m.exec(submit.stdout)?.[1]);
    const token = /^token\s+(\S+)$/m.exec(submit.stdout)?.[1] as string;
    expect(submit.stdout).toMatch(/launcher needs this token/);
    expect(submit.stdout).toMatch(/self-launched: boa starts nothing for it, but gives it GPUs \(paid\)/);
    // Asked for by name: the API's warning that a job without a workload is self-launched is not repeated.
    expect(submit.stdout).not.toMatch(/^warning/m);
    // Submitted before any budget: it would wait for a plan forever; the CLI says what to do.
    expect(submit.stdout).toMatch(
      /^budget\s+none is set: the job waits until boa budget set <gpuHoursPerHour>$/m,
    );
    // The job's own token reads the job's allocation, and is not the operator token.
    expect(token).not.toBe(s.token);
    expect((await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).status).toBe(200);

    const list = await s.boa(['jobs', 'list']);
    expect(list.status).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+name\s+class\s+state\s+epoch\s+GPUs\s+GPU-h/);
    const [row] = rows(list.stdout);
    expect(row?.slice(0, 10)).toEqual([
      String(id),
      'resnet18',
      'cifar10',
      'waiting',
      '1', // its first statistical epoch
      '0',
      '0.00', // never placed: no GPU-hours booked
      expect.any(String),
      '-',
      '-',
    ]);
    // Why it waits (a plan, nodes to boot, or the budget), in the last column.
    expect(row?.slice(10).join(' ')).toMatch(
      /^(waits for a plan \(is a budget set\? boa budget set N\)|waits for nodes to boot|queued for the budget)$/,
    );

    const cancel = await s.boa(['jobs', 'cancel', String(id)]);
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toBe(`job ${id} is cancelled\n`);
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.state).toBe('cancelled');

    const waiting = await s.boa(['jobs', 'list', '--state', 'waiting']);
    expect(waiting.stdout).toBe('no jobs\n');
    const cancelled = await s.boa(['--json', 'jobs', 'list', '--state', 'cancelled']);
    expect(JSON.parse(cancelled.stdout).jobs.map((j: { id: number }) => j.id)).toEqual([id]);
  });

  it('points stop, kill, rm and delete at cancel, cancelling nothing', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched']);
    const id = /^job\s+(\d+)/m.exec(submit.stdout)?.[1] as string;
    const verbs = ['stop', 'kill', 'rm', 'delete'];
    // Each run cancels nothing, so none depends on another: all at once, with the help.
    const [help, ...runs] = await Promise.all([
      s.boa(['jobs', '--help']),
      ...verbs.map((verb) => s.boa(['jobs', verb, id, '--force'])),
    ]);
    for (const [i, verb] of verbs.entries()) {
      expect(runs[i]?.status).toBe(2);
      expect(runs[i]?.stderr).toBe(
        `boa: boa jobs has no ${verb}: to stop a job, cancel it: boa jobs cancel <job...>\n`,
      );
    }
    const job = await s.request('GET', `/v1/jobs/${id}`);
    expect(job.body.state).toBe('waiting');
    // Not offered in the help.
    expect(help?.stdout).not.toMatch(/^\s+(stop|kill|rm|delete)\b/m);
  });

  it('says nothing of the budget when one is set', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched']);
    expect(submit.status).toBe(0);
    // No name, none shown.
    expect(submit.stdout).toMatch(/^job\s+1 \(cifar10, waiting\)$/m);
    expect(submit.stdout).not.toMatch(/^budget/m);
  });
});
