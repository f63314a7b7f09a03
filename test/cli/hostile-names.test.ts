/**
 * Whatever the service stored (rows from before names were checked), the CLI never lets control
 * characters reach the terminal; and `boa classes delete` deletes a class.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { printable, printableJson, table } from '../../src/cli/format.ts';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const EVIL = 'evil\u001b[2J\u001b[31mred\r\nline\u0000nul\u009b1m\u202e';
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

describe('printing stored names', () => {
  it('escapes control and bidi characters in tables, text and JSON', () => {
    expect(printable(EVIL)).toBe('evil\\u001b[2J\\u001b[31mred\\r\\nline\\u0000nul\\u009b1m\\u202e');
    expect(table(['name'], [[EVIL]])).not.toMatch(TERMINAL_CONTROL);
    expect(
      table(['name'], [[EVIL]])
        .trim()
        .split('\n'),
    ).toHaveLength(2);
    const json = JSON.stringify({ name: EVIL });
    expect(JSON.parse(printableJson(json)).name).toBe(EVIL);
    expect(printableJson(json)).not.toMatch(TERMINAL_CONTROL);
  });

  it('boa jobs list shows a hostile stored name escaped, in text and --json', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    s.service.registerJob('cifar10', EVIL); // as an old row would be: the API refuses it now
    const list = await s.boa(['jobs', 'list']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(TERMINAL_CONTROL);
    expect(list.stdout).toContain('evil\\u001b[2J');
    const json = await s.boa(['jobs', 'list', '--json']);
    expect(json.stdout).not.toMatch(TERMINAL_CONTROL);
    expect(JSON.parse(json.stdout).jobs[0].name).toBe(EVIL);
  }, 60_000);

  it('boa classes delete removes a class, and is refused while jobs of it are active', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const { job } = s.service.registerJob('ncf', undefined);
    const busy = await s.boa(['classes', 'delete', 'ncf']);
    expect(busy.status).toBe(1);
    expect(busy.stderr).toMatch(/class ncf has 1 active job/);
    s.service.finishJob(job.id, 'cancelled');
    const done = await s.boa(['classes', 'delete', 'ncf']);
    expect(done.status, done.stderr).toBe(0);
    expect(done.stdout).toBe('class ncf deleted; the next plan leaves it out\n');
    expect(s.repo.listClasses().map((c) => c.name)).not.toContain('ncf');
  }, 60_000);
});
