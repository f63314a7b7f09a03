/**
 * `boa jobs list` paged: the newest jobs under --limit with the page before, and --ended (the jobs
 * that ended last), -q for the ids alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';
import { rows } from './table-rows.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('lists the newest jobs when there are more than --limit, and says older ones are left out', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    for (const name of ['a', 'b', 'c', 'd']) {
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name })).status).toBe(201);
    }
    // Four reads of the same jobs: at once.
    const [list, older, oldest, all] = await Promise.all([
      s.boa(['jobs', 'list', '--limit', '2']),
      s.boa(['jobs', 'list', '--limit', '2', '--before', '3']),
      s.boa(['jobs', 'list', '--limit', '2', '--before', '2']),
      s.boa(['jobs', 'list', '--limit', '10']),
    ]);
    expect(list.status).toBe(0);
    // The two newest, oldest first: a job submitted after the first page is never hidden.
    expect(rows(list.stdout).map((r) => r[1])).toEqual(['c', 'd']);
    expect(list.stderr).toBe(
      'the newest 2 jobs are shown; older ones: --before 3 (or --limit N, up to 10000)\n',
    );
    // The page before it, as the hint says: the rest, and a short page says nothing.
    expect(rows(older.stdout).map((r) => r[1])).toEqual(['a', 'b']);
    // A full page that reaches the first job names no page before it (a newcomer was sent to an empty one).
    expect(older.stderr).toBe('');
    expect(rows(oldest.stdout).map((r) => r[1])).toEqual(['a']);
    expect(oldest.stderr).toBe('');
    expect(rows(all.stdout).map((r) => r[1])).toEqual(['a', 'b', 'c', 'd']);
    expect(all.stderr).toBe('');
    const api = await s.request('GET', '/v1/jobs?limit=3');
    expect(api.body.jobs.map((j: { name: string }) => j.name)).toEqual(['b', 'c', 'd']);
    const page = await s.request('GET', '/v1/jobs?limit=3&before=4&state=waiting');
    expect(page.body.jobs.map((j: { name: string }) => j.name)).toEqual(['a', 'b', 'c']);
    expect((await s.request('GET', '/v1/jobs?before=0')).body.error).toMatchObject({ field: 'before' });
  });

  it('lists the jobs that ended last, newest first, with --ended (what finished lately); -q only their ids', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    for (const name of ['a', 'b', 'c', 'd']) {
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name })).status).toBe(201);
    }
    expect((await s.request('POST', '/v1/jobs/3/cancel')).status).toBe(200);
    await s.ticks(1);
    expect((await s.request('POST', '/v1/jobs/1/cancel')).status).toBe(200);
    // Reads of the same jobs, and refusals: none depends on another, all at once.
    const [ended, last, some, ids, quiet, both, paged] = await Promise.all([
      s.boa(['jobs', 'list', '--ended']),
      s.boa(['jobs', 'list', '--ended', '--limit', '1']),
      s.boa(['jobs', 'list', '--ended', '--state', 'waiting,cancelled']),
      s.boa(['jobs', 'list', '-q', '--ended']),
      s.boa(['jobs', 'list', '--quiet', '--state', 'waiting']),
      s.boa(['--json', 'jobs', 'list', '-q']),
      s.boa(['jobs', 'list', '--ended', '--before', '3']),
    ]);
    expect(ended.stderr).toBe('');
    expect(ended.status).toBe(0);
    // The last to end first; the jobs still waiting are not among them.
    expect(rows(ended.stdout).map((r) => r[1])).toEqual(['a', 'c']);
    expect(rows(last.stdout).map((r) => r[1])).toEqual(['a']);
    expect(last.stderr).toBe('the last job to end is shown; more: --limit N (up to 10000)\n');
    // With --state, of those states: the waiting ones, which have not ended, after the ended.
    expect(
      rows(some.stdout)
        .map((r) => r[1])
        .slice(0, 2),
    ).toEqual(['a', 'c']);
    expect(
      rows(some.stdout)
        .map((r) => r[1])
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd']);
    // Only the ids, one a line, for xargs; the same rows.
    expect(ids).toMatchObject({ status: 0, stdout: '1\n3\n', stderr: '' });
    expect(quiet.stdout).toBe('2\n4\n');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--quiet prints only the ids/);
    expect(paged.status).toBe(2);
    expect(paged.stderr).toMatch(/--ended .* has no pages: give --limit N/);
  });
});
