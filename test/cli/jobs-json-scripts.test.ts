// --json output a script can trust: a full page says so on stderr, and a job named that does not exist gets the API's error document as an id does (found by a Slurm user's review).
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('boa jobs: review findings', () => {
  it('jobs list --json says on stderr when the page is full and older jobs are left out, as the table does', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    for (let i = 0; i < 3; i++)
      expect((await s.boa(['jobs', 'submit', 'cifar10', '--self-launched'])).status).toBe(0);
    const table = await s.boa(['jobs', 'list', '--limit', '2']);
    expect(table.stderr).toContain('older ones: --before 2');
    // A script reading the JSON gets 2 of 3 jobs: stdout stays one JSON document, stderr says so.
    const json = await s.boa(['--json', 'jobs', 'list', '--limit', '2']);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout).jobs.map((j: { id: number }) => j.id)).toEqual([2, 3]);
    expect(json.stderr).toContain('older ones: --before 2');
  });

  it('--json gives the same error document for a job named that does not exist as for an id that does not', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const byId = await s.boa(['--json', 'jobs', 'show', '99']);
    expect(byId.status).toBe(1);
    expect(JSON.parse(byId.stdout).error.code).toBe('not_found');
    const byName = await s.boa(['--json', 'jobs', 'show', 'nosuch']);
    expect(byName.status).toBe(1);
    // Was: empty stdout, so `boa --json jobs show "$ref" | jq -r .error.code` depends on the ref's shape.
    expect(JSON.parse(byName.stdout).error.code).toBe('not_found');
  });
});
