import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_URL, resolveConnection } from '../../src/cli/connection.ts';
import { CliError, EXIT } from '../../src/cli/errors.ts';

const cwd = mkdtempSync(join(tmpdir(), 'boa-conn-'));
mkdirSync(join(cwd, 'data'));
writeFileSync(join(cwd, 'data', 'token'), 'token-from-the-file\n');
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('resolveConnection', () => {
  it('prefers --url over BOA_URL over the local default, and drops a trailing slash', () => {
    expect(resolveConnection({}, {}, cwd).url).toBe(DEFAULT_URL);
    expect(resolveConnection({}, { BOA_URL: 'http://boa.internal:9000/' }, cwd).url).toBe(
      'http://boa.internal:9000',
    );
    expect(resolveConnection({ url: 'https://a.example' }, { BOA_URL: 'http://b' }, cwd).url).toBe(
      'https://a.example',
    );
  });

  it("refuses a URL given with the API's /v1, naming the root to give; a proxy's own prefix stays", () => {
    for (const url of ['http://127.0.0.1:8787/v1', 'http://127.0.0.1:8787/v1/', 'https://a.example/boa/v1']) {
      let error: unknown;
      try {
        resolveConnection({ url }, {}, cwd);
      } catch (caught) {
        error = caught;
      }
      expect(error, url).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(EXIT.badInput);
      expect((error as Error).message).toContain(`give ${url.replace(/\/v1\/*$/, '')}, got "${url}"`);
    }
    expect(resolveConnection({ url: 'https://a.example/boa/' }, {}, cwd).url).toBe('https://a.example/boa');
    expect(resolveConnection({ url: 'https://a.example/v1x' }, {}, cwd).url).toBe('https://a.example/v1x');
  });

  it('prefers --token over BOA_TOKEN over the local token file', () => {
    expect(resolveConnection({ token: 'flag' }, { BOA_TOKEN: 'env' }, cwd)).toMatchObject({
      token: 'flag',
      tokenSource: 'option',
    });
    expect(resolveConnection({}, { BOA_TOKEN: 'env' }, cwd)).toMatchObject({
      token: 'env',
      tokenSource: 'env',
    });
    expect(resolveConnection({}, {}, cwd)).toMatchObject({
      token: 'token-from-the-file',
      tokenSource: 'file',
    });
  });

  it('refuses a token no request could carry, naming where it came from (not: the service unreachable)', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error as CliError;
      }
      throw new Error('not refused');
    };
    const fromEnv = refusal(() => resolveConnection({}, { BOA_TOKEN: 'abc\ndef-0123456789' }, cwd));
    expect(fromEnv).toBeInstanceOf(CliError);
    expect(fromEnv.exitCode).toBe(EXIT.badInput);
    expect(fromEnv.message).toMatch(/^BOA_TOKEN must be the operator token .*no spaces or line breaks/);
    expect(refusal(() => resolveConnection({ token: 'tok€-0123456789abcdef' }, {}, cwd)).message).toMatch(
      /^--token must be/,
    );
    // Empty (a variable not set), not a fall back to BOA_TOKEN or the token file.
    expect(refusal(() => resolveConnection({ token: '' }, { BOA_TOKEN: 'env' }, cwd)).message).toMatch(
      /^--token must be/,
    );
  });

  it.each([
    ['an escape', 'abcdefghij\x1bklmnopqrstuvwxyz'],
    ['a NUL', 'abcdefgh\x00ijklmnopqrstuvwxyz'],
    ['a space', 'abcdefgh ijklmnopqrstuvwxyz'],
    ['too few characters', 'hunter2'],
  ])(
    'refuses a token file holding %s as a usage error naming the file and the rule (not: unreachable)',
    (_what, content) => {
      const dir = join(cwd, `bad-${content.length}-${content.charCodeAt(8)}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'token'), `${content}\n`);
      let error: unknown;
      try {
        resolveConnection({}, { BOA_DATA_DIR: dir }, cwd);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(EXIT.badInput);
      expect((error as CliError).message).toBe(
        `the token file ${join(dir, 'token')} holds no usable operator token (at least 16 characters, each visible ASCII (! to ~) or Latin-1 (¡ to ÿ): no spaces, line breaks or control characters): delete it and restart the service, which writes a new one, or give the token with BOA_TOKEN or --token`,
      );
    },
  );

  it('says a token file it cannot read in one line naming it, not a stack trace', () => {
    // EACCES (another user's 0600 file) takes the same path; a folder makes it fail as root too.
    const dir = join(cwd, 'token-a-folder');
    mkdirSync(join(dir, 'token'), { recursive: true });
    let error: unknown;
    try {
      resolveConnection({}, { BOA_DATA_DIR: dir }, cwd);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(EXIT.unauthorized);
    expect((error as CliError).message).toBe(
      `cannot read the token file ${join(dir, 'token')}: it is a folder; give the operator token with BOA_TOKEN or --token`,
    );
  });

  it('reads the token file of BOA_DATA_DIR when set', () => {
    const dir = join(cwd, 'elsewhere');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'other-0123456789abcdef\n');
    expect(resolveConnection({}, { BOA_DATA_DIR: dir }, cwd).token).toBe('other-0123456789abcdef');
  });

  it('never sends the local token file to a remote service', () => {
    expect(resolveConnection({ url: 'https://boa.example.com' }, {}, cwd)).toMatchObject({
      token: undefined,
      tokenSource: 'none',
    });
    expect(resolveConnection({ url: 'http://localhost:8080' }, {}, cwd).tokenSource).toBe('file');
  });

  it.each(['http://127.attacker.example:8080', 'http://127.0.0.1.nip.io', 'https://127-0-0-1.example'])(
    'never sends the local token file to %s, a remote name that merely starts like a loopback address',
    (url) => {
      expect(resolveConnection({ url }, {}, cwd)).toMatchObject({ token: undefined, tokenSource: 'none' });
    },
  );

  it.each(['http://127.0.0.1:8080', 'http://127.1.2.3:9000', 'http://127.1', 'http://[::1]:8080'])(
    'reads the local token file for the loopback address %s',
    (url) => {
      expect(resolveConnection({ url }, {}, cwd).tokenSource).toBe('file');
    },
  );

  it.each(['not a url', 'ftp://host', 'file:///etc/passwd'])('refuses %s as a usage error', (url) => {
    try {
      resolveConnection({ url }, {}, cwd);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(EXIT.badInput);
      expect((error as CliError).message).toContain(url);
    }
  });
});
