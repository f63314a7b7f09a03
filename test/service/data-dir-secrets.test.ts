/**
 * The secrets a local service keeps in its data dir (`token`, `job-token.key`): a write cut short by a
 * full disk or a crash leaves an empty file, which must not become an empty token or key.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { ManualClock } from './harness.ts';

const dirs: string[] = [];
const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-secrets-'));
  dirs.push(dir);
  return dir;
}

async function boot(dir: string) {
  const booted = await bootService(resolveConfig({ dataDir: dir }), {
    clock: new ManualClock(),
    computer: new InlinePlanComputer(),
    logger: pino({ level: 'silent' }),
    executor: null,
  });
  closes.push(booted.close);
  return booted;
}

const keyFile = (dir: string) => join(dir, 'job-token.key');
const storedKey = (dir: string) => Buffer.from(readFileSync(keyFile(dir), 'utf8').trim(), 'base64');

describe("the data dir's token and job-token key", () => {
  it('are made on a first start, whole, owner-only, and read again by the next', async () => {
    const dir = dataDir();
    const first = await boot(dir);
    const token = first.token;
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(`${token}\n`);
    expect(storedKey(dir)).toHaveLength(32);
    for (const file of [join(dir, 'token'), keyFile(dir)]) expect(statSync(file).mode & 0o777).toBe(0o600);
    // Written through a temporary file that is renamed into place: none is left behind.
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    const key = first.service.deps.jobTokenKey;
    await closes.pop()?.();
    const again = await boot(dir);
    expect(again.token).toBe(token);
    expect(again.service.deps.jobTokenKey?.equals(key as Buffer)).toBe(true);
  });

  it('left empty by a write cut short (a full disk, a crash) are made anew, not used empty', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'token'), '');
    writeFileSync(keyFile(dir), '');
    const boa = await boot(dir);
    // An empty operator token locked every request out; an empty key made job tokens anyone can derive.
    expect(boa.token.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(dir, 'token'), 'utf8').trim()).toBe(boa.token);
    const status = await boa.app.request('/v1/status', {
      headers: { authorization: `Bearer ${boa.token}` },
    });
    expect(status.status).toBe(200);
    expect(boa.service.deps.jobTokenKey).toHaveLength(32);
    expect(storedKey(dir).equals(boa.service.deps.jobTokenKey as Buffer)).toBe(true);
  });

  it('a job-token key of another length is refused, naming the file, before anything is bound', async () => {
    const dir = dataDir();
    writeFileSync(keyFile(dir), `${Buffer.alloc(12, 7).toString('base64')}\n`);
    let bound = false;
    await expect(
      bootService(resolveConfig({ dataDir: dir }), {
        clock: new ManualClock(),
        computer: new InlinePlanComputer(),
        logger: pino({ level: 'silent' }),
        executor: null,
        beforeSideEffects: async () => {
          bound = true;
        },
      }),
    ).rejects.toThrow(`${keyFile(dir)} holds a 12-byte key, not the 32 bytes boa writes`);
    expect(bound).toBe(false);
    // The refused start let go of the data dir: the next one may take it.
    expect(existsSync(join(dir, 'boa.pid'))).toBe(false);
  });
});

describe('a start on AWS without an operator token', () => {
  it('is refused as a setting to fix before the data dir is made', async () => {
    const dir = join(dataDir(), 'data');
    const config = resolveConfig({
      dataDir: dir,
      cloud: 'aws',
      aws: { region: 'us-east-1', clusterName: 'boa', nodegroupName: 'gpu' },
    });
    const start = bootService(config, {
      clock: new ManualClock(),
      computer: new InlinePlanComputer(),
      logger: pino({ level: 'silent' }),
      executor: null,
    });
    await expect(start).rejects.toThrow(expect.objectContaining({ name: 'ConfigError' }));
    await expect(start).rejects.toThrow(/cloud "aws" needs an operator token/);
    // Like every other setting refused at start: nothing made, no database, no lock.
    expect(existsSync(dir)).toBe(false);
  });
});
