/**
 * `npm test`'s pretest (scripts/ensure-chromium.mjs) where Chromium is missing and apt-get fails (a
 * root machine offline): it stops `npm test`, so its message must say how to run the tests anyway.
 * A fake apt-get first on the PATH stands in for the failing one; BOA_CHROMIUM points at no file.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/ensure-chromium.mjs');
// The script installs only as root on Linux with /usr/bin/apt-get; elsewhere it never runs apt-get.
const installs = process.platform === 'linux' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');

describe.skipIf(!installs)('ensure-chromium when apt-get fails', () => {
  const temp = mkdtempSync(join(tmpdir(), 'boa-ensure-chromium-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));
  writeFileSync(
    join(temp, 'apt-get'),
    '#!/bin/sh\necho "E: Could not resolve deb.debian.org" >&2\nexit 100\n',
  );
  chmodSync(join(temp, 'apt-get'), 0o755);
  const run = (extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [SCRIPT], {
      encoding: 'utf8',
      env: {
        ...process.env,
        BOA_CHROMIUM: join(temp, 'no-chromium'),
        BOA_SKIP_CHROMIUM_INSTALL: '',
        PATH: `${temp}${delimiter}${process.env.PATH}`,
        ...extra,
      },
    });

  it('fails, naming the variable that runs the other tests without it', () => {
    const failed = run();
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('apt-get update -q failed (exit 100)');
    expect(failed.stderr).toContain('BOA_SKIP_CHROMIUM_INSTALL=1 npm test');
  });

  it('lets npm test go on with that variable set', () => {
    expect(run({ BOA_SKIP_CHROMIUM_INSTALL: '1' }).status).toBe(0);
  });
});
