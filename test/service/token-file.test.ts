/**
 * The local service's secrets in its data dir: the generated operator token (`<data dir>/token`) and
 * the key executed jobs' tokens are derived from (`<data dir>/job-token.key`), both owner-only. A file
 * that holds a secret boa would not have written (a short token, a short key) stops the start with one
 * line naming the file, instead of a service nobody can call or job tokens easier to forge.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { startFailure } from '../../src/service/startup.ts';
import { ManualClock } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-token-file-'));
let n = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function boot(dataDir: string) {
  const boa = await bootService(resolveConfig({ dataDir }), {
    clock: new ManualClock(),
    computer: new InlinePlanComputer(),
    logger: pino({ level: 'silent' }),
    executor: null,
  });
  closers.push(boa.close);
  return boa;
}

/** A first start on the data dir, then a clean stop: the files are made. */
async function firstStart(dataDir: string) {
  await (await boot(dataDir)).close();
  closers.pop();
}

/** The one line and exit code a start that fails prints (main.ts). */
async function refusal(dataDir: string) {
  const error = await boot(dataDir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the start should have been refused').toBeDefined();
  return startFailure(error);
}

describe('the operator token file', () => {
  it('is generated on a first start, owner-only, and is the token the API takes', async () => {
    const dir = join(root, `data-${n++}`);
    const boa = await boot(dir);
    const file = join(dir, 'token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(boa.token);
    expect(boa.token.length).toBeGreaterThanOrEqual(16);
    const res = await boa.app.request('/v1/budget', { headers: { authorization: `Bearer ${boa.token}` } });
    expect(res.status).toBe(200);
  });

  // An empty one (a write cut short) is made anew: data-dir-secrets.test.ts.
  it.each([
    ['too short', 'hunter2\n'],
    ['two words', 'operator token 0123456789\n'],
    // Long enough, no spaces, and yet no client can send it: it passed the old check (found in a trial).
    ['an escape', 'abcdefghij\x1bklmnopqrstuvwxyz\n'],
    ['a NUL', 'abcdefgh\x00ijklmnopqrstuvwxyz\n'],
    ['a character beyond Latin-1', 'tok€-0123456789abcdef\n'],
  ])('%s, refuses the start naming the file and what to do (exit 2)', async (_what, content) => {
    const dir = join(root, `data-${n++}`);
    await firstStart(dir);
    writeFileSync(join(dir, 'token'), content);
    const { line, exitCode } = await refusal(dir);
    expect(exitCode).toBe(2);
    expect(line).toContain(join(dir, 'token'));
    expect(line).toMatch(/at least 16 characters, each visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\)/);
    expect(line).toMatch(/delete it/);
  });
});

describe('the job-token key file', () => {
  it('is generated on a first start, owner-only, 32 random bytes', async () => {
    const dir = join(root, `data-${n++}`);
    await boot(dir);
    const file = join(dir, 'job-token.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
  });

  // An empty one is made anew (no job token was ever derived from it): data-dir-secrets.test.ts.
  it.each([
    ['cut short', 'AAAA\n'],
    ['not base64 of 32 bytes', 'hunter2\n'],
  ])(
    '%s, refuses the start naming the file (exit 1), never derives job tokens from it',
    async (_w, content) => {
      const dir = join(root, `data-${n++}`);
      await firstStart(dir);
      writeFileSync(join(dir, 'job-token.key'), content);
      const { line, exitCode } = await refusal(dir);
      expect(exitCode).toBe(1);
      expect(line).toContain(join(dir, 'job-token.key'));
      expect(line).toMatch(/backup/);
    },
  );
});

describe('the data dir', () => {
  it("a first start makes it owner-only: other users cannot read the database's workloads and env", async () => {
    const dir = join(root, `data-${n++}`, 'nested');
    await boot(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, '..')).mode & 0o777).toBe(0o700);
  });

  it('an existing one keeps the mode its operator gave it', async () => {
    const dir = join(root, `data-${n++}`);
    mkdirSync(dir, { mode: 0o750 });
    chmodSync(dir, 0o750);
    await boot(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o750);
  });
});
