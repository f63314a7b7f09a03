/**
 * An upgrade and its rollback, as the service process sees them: a start that migrates logs where it
 * kept the database as it was; an older boa on a file a newer one migrated is refused naming that copy,
 * and with BOA_ROLLBACK_TO_COPY=1 (or true, yes; a variable it knows, not warned about) starts from it.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { migrateAsNewer, olderDatabase, TAGS } from '../store/schema-versions.ts';
import { unusedPort } from '../cli/cli-harness.ts';
import { killHard, runToExit, startProcess } from './process-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-upgrade-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const LAST = TAGS.at(-1)!;

describe('upgrade and rollback', () => {
  it('a start that migrates logs the copy it kept', async () => {
    const data = join(root, 'older');
    mkdirSync(data);
    olderDatabase(join(data, 'boa.sqlite'), LAST, join(root, 'older-migrations')).close();
    const service = await startProcess(['--data', data, '--port', String(await unusedPort())]);
    await killHard(service.child);
    const copy = join(data, `boa.sqlite.at-${TAGS.at(-2)}`);
    expect(service.output()).toContain(`"event":"database_copied","copy":"${copy}"`);
    expect(existsSync(copy)).toBe(true);
  }, 60_000);

  it('an older boa on a newer file: refused naming the copy; BOA_ROLLBACK_TO_COPY=1 starts from it', async () => {
    const data = join(root, 'newer');
    openStore(data).close();
    const file = join(data, 'boa.sqlite');
    const copy = `${file}.at-${LAST}`;
    copyFileSync(file, copy);
    migrateAsNewer(file);

    const refused = await runToExit(['--data', data, '--port', String(await unusedPort())]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^boa: .*was written by a newer boa/),
    ]);
    expect(refused.stderr).toContain(`this version's copy from before the upgrade, ${copy} (written 20`);

    // Any value but 1, true or yes is refused, naming the variable; nothing is moved.
    const misspelt = await runToExit(['--data', data, '--port', String(await unusedPort())], {
      BOA_ROLLBACK_TO_COPY: 'on',
    });
    expect(misspelt.code, misspelt.stderr).toBe(2);
    expect(misspelt.stderr).toContain(
      'BOA_ROLLBACK_TO_COPY must be 1, true or yes (on), 0, false or no (off), or unset, got "on"',
    );
    expect(existsSync(copy)).toBe(true);

    // true (any case) as 1: it was silently read as unset.
    const service = await startProcess(['--data', data, '--port', String(await unusedPort())], {
      BOA_ROLLBACK_TO_COPY: 'True',
    });
    await killHard(service.child);
    expect(service.output()).toContain('"event":"database_rolled_back"');
    // What is lost and what to do about the budget, with the copy's age.
    expect(service.output()).toMatch(/"copiedAt":"\d{4}-\d\d-\d\dT[\d:.]+Z"/);
    expect(service.output()).toContain('jobs that finished since wait or run again');
    expect(service.output()).toContain('set a lower budget until the window has passed');
    expect(service.output()).not.toContain('"event":"unknown_env"');
    expect(existsSync(copy)).toBe(false);
    expect(readdirSync(data).filter((f) => /^boa\.sqlite\.newer-[\dTZ-]+$/.test(f))).toHaveLength(1);
  }, 60_000);
});
