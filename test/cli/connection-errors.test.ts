/**
 * The CLI's exit codes when it cannot use the service: 4 for a token refused or not found (data/token
 * read for a local service), 3 for no service at BOA_URL, 2 for a usage error or a URL not http.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBoa, unusedPort } from './cli-harness.ts';
import { started, storedBudget } from './budget-fixture.ts';
import { runCleanups } from './cleanups.ts';

afterEach(runCleanups);

describe('boa connection errors', () => {
  it('exits 4 on a wrong token and changes nothing', async () => {
    const s = await started();
    // Two refusals, which change nothing: at once.
    const [wrong, flag] = await Promise.all([
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: 'not-the-operator-token' }),
      s.boa(['--token', 'not-the-operator-token', 'status']),
    ]);
    expect(wrong.status).toBe(4);
    expect(wrong.stderr).toBe(
      'boa: the token in BOA_TOKEN was refused: set BOA_TOKEN to the operator token (local: the file data/token)\n',
    );
    expect(await storedBudget(s)).toBeNull();
    expect(flag.status).toBe(4);
    expect(flag.stderr).toBe(
      'boa: the token given with --token was refused: give the operator token (local: the file data/token)\n',
    );
  });

  it('exits 4 when no token is found, and reads data/token for a local service', async () => {
    const s = await started();
    // Another service's token file (another data dir), for the second refusal.
    mkdirSync(join(s.cwd, 'other'));
    writeFileSync(join(s.cwd, 'other', 'token'), 'a-token-of-another-service\n');
    // Two refusals, which change nothing: at once.
    const [none, other] = await Promise.all([
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined }),
      s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined, BOA_DATA_DIR: join(s.cwd, 'other') }),
    ]);
    expect(none.status).toBe(4);
    expect(none.stderr).toBe(
      `boa: no operator token was given: there is no ${join(s.cwd, 'data', 'token')} ` +
        "(set BOA_DATA_DIR to the service's data dir, or BOA_TOKEN to the operator token)\n",
    );
    expect(await storedBudget(s)).toBeNull();

    // Another service's token file: named, with what to set; since 2026-12-02 not sent (this service
    // cannot prove it holds it), where before it was sent and refused.
    expect(other.status).toBe(4);
    expect(other.stderr).toBe(
      `boa: the service at ${s.url} did not prove it holds the operator token in ${join(s.cwd, 'other', 'token')} ` +
        `(it answered GET /token-proof with a wrong proof), so the token was not sent: that file is another ` +
        `service's, or what listens at ${s.url} is not the boa that wrote it (set BOA_DATA_DIR to this ` +
        "service's data dir, or BOA_TOKEN)\n",
    );

    mkdirSync(join(s.cwd, 'data'));
    writeFileSync(join(s.cwd, 'data', 'token'), `${s.token}\n`);
    const fromFile = await s.boa(['budget', 'set', '30'], { BOA_TOKEN: undefined });
    expect(fromFile.stderr).toBe('');
    expect(fromFile.status).toBe(0);
    expect(await storedBudget(s)).toBe(30);
  });

  it('exits 3 when no service listens at BOA_URL', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const run = await runBoa(['budget', 'get'], { BOA_URL: url, BOA_TOKEN: 'x'.repeat(20) }, process.cwd());
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(`^boa: cannot reach the boa service at ${url} \\(is it running\\? set BOA_URL\\)`),
    );
    expect(run.stderr.split('\n')).toHaveLength(2); // one line, no stack trace
  });

  it('exits 2 on a usage error or a URL that is not http', async () => {
    const s = await started();
    // Three runs that do not depend on each other: at once.
    const [unknown, version, badUrl] = await Promise.all([
      s.boa(['budjet', 'get']),
      // --version answers without asking the service: the package's version, exit 0.
      s.boa(['--version']),
      s.boa(['budget', 'get'], { BOA_URL: 'ftp://example.com' }),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'budjet'");
    // A pointer to the help, not the whole help after the error.
    expect(unknown.stderr).toContain('(add --help for usage)');
    expect(unknown.stderr).not.toContain('Usage:');
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(version).toMatchObject({ status: 0, stdout: `${pkg.version}\n` });
    expect(badUrl.status).toBe(2);
    expect(badUrl.stderr).toMatch(/must start with http:\/\/ or https:\/\//);
  });
});
