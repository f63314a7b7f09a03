/**
 * What an operator with many jobs reaches for: `jobs list` filtered by states, class and name; `jobs
 * cancel` of several jobs at once, by id or by name; `jobs show` by name. A name must pick out one job.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** The id column of a `jobs list` table. */
const listed = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => Number(line.trim().split(/\s+/)[0]));

async function withJobs(jobs: Array<[string, string]>) {
  const s = await startCliService();
  cleanups.push(s.close);
  const ids: number[] = [];
  for (const [className, name] of jobs) {
    const res = await s.request('POST', '/v1/jobs', { class: className, name });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  const state = async (id: number) => (await s.request('GET', `/v1/jobs/${id}`)).body.state as string;
  return { s, ids, state };
}

describe('boa jobs by name, several at once, filtered', () => {
  it('lists jobs in several states, of a class, of a name', async () => {
    const { s, ids } = await withJobs([
      ['cifar10', 'sweep'],
      ['bert', 'sweep'],
      ['cifar10', 'solo'],
    ]);
    const [a, b, c] = ids as [number, number, number];
    expect((await s.request('POST', `/v1/jobs/${b}/cancel`)).status).toBe(200);

    const active = await s.boa(['jobs', 'list', '--state', 'waiting,running']);
    expect(active.status, active.stderr).toBe(0);
    expect(listed(active.stdout)).toEqual([a, c]);
    // Repeated, it means any of them too (it kept only the last).
    const repeated = await s.boa(['jobs', 'list', '--state', 'cancelled', '--state', 'waiting']);
    expect(listed(repeated.stdout)).toEqual([a, b, c]);
    expect(listed((await s.boa(['jobs', 'list', '--class', 'cifar10'])).stdout)).toEqual([a, c]);
    expect(listed((await s.boa(['jobs', 'list', '--name', 'sweep'])).stdout)).toEqual([a, b]);
    const both = await s.boa(['jobs', 'list', '--name', 'sweep', '--state', 'cancelled']);
    expect(listed(both.stdout)).toEqual([b]);
    expect((await s.boa(['jobs', 'list', '--class', 'imagenet'])).stdout).toBe('no jobs\n');
  });

  it('cancels several jobs by id; one that cannot be cancelled is reported and the rest go on', async () => {
    const { s, ids, state } = await withJobs([
      ['cifar10', 'x'],
      ['cifar10', 'y'],
    ]);
    const [a, b] = ids as [number, number];
    const run = await s.boa(['jobs', 'cancel', String(a), '999', String(b)]);
    expect(run.stdout).toBe(`job ${a} is cancelled\njob ${b} is cancelled\n`);
    expect(run.stderr).toBe('boa: job 999 not found (see boa jobs list)\nboa: 1 of 3 not cancelled\n');
    expect(run.status).toBe(1);
    expect([await state(a), await state(b)]).toEqual(['cancelled', 'cancelled']);
  });

  it('cancels a job by its name, refuses a name that fits several, and ignores finished namesakes', async () => {
    const { s, ids, state } = await withJobs([
      ['cifar10', 'first'],
      ['cifar10', 'twin'],
      ['bert', 'twin'],
    ]);
    const [first, twin1, twin2] = ids as [number, number, number];

    const byName = await s.boa(['jobs', 'cancel', 'first', 'first']);
    expect(byName.stdout).toBe(`job ${first} is cancelled\n`);
    expect(byName.status).toBe(0);
    // Again: only a finished job has that name now, and the message says which.
    const again = await s.boa(['jobs', 'cancel', 'first']);
    expect(again.status).toBe(1);
    expect(again.stderr).toBe(
      `boa: no waiting or running job is named "first" (job ${first} is cancelled)\n`,
    );

    const ambiguous = await s.boa(['jobs', 'cancel', 'twin']);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr).toBe(
      `boa: 2 waiting or running jobs are named "twin": job ${twin1} is waiting, job ${twin2} is waiting; give the id(s)\n`,
    );
    expect([await state(twin1), await state(twin2)]).toEqual(['waiting', 'waiting']);

    // A finished namesake does not make a name ambiguous: a resubmitted "first" is cancelled by name.
    const again2 = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'first' });
    const rerun = await s.boa(['jobs', 'cancel', 'first']);
    expect(rerun.stdout).toBe(`job ${again2.body.id} is cancelled\n`);
  });

  it('shows a job by its name; a name several jobs share is refused, listing them, unless one is still going', async () => {
    const { s, ids } = await withJobs([
      ['cifar10', 'r18'],
      ['cifar10', 'dup'],
      ['cifar10', 'dup'],
    ]);
    const show = await s.boa(['jobs', 'show', 'r18']);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^job\\s+${ids[0]} r18 \\(cifar10\\)$`, 'm'));
    const dup = await s.boa(['jobs', 'show', 'dup']);
    expect(dup.status).toBe(2);
    expect(dup.stderr).toMatch(
      /^boa: 2 jobs are named "dup": job \d+ is waiting, job \d+ is waiting; give the id/,
    );
    // A name reused after a run ended is the run still going: show, logs and wait pick it.
    await s.boa(['jobs', 'cancel', String(ids[0])]);
    const rerun = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'r18' })).body.id;
    const again = await s.boa(['jobs', 'show', 'r18']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^job\\s+${rerun} r18 \\(cifar10\\)$`, 'm'));
    const none = await s.boa(['jobs', 'logs', 'nope']);
    expect(none.status).toBe(1);
    expect(none.stderr).toBe('boa: no job is named "nope" (see boa jobs list)\n');
  });
});
