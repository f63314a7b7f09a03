/**
 * A misspelt BOA_* variable was silently ignored while the config file refuses a typo: the start now
 * warns, one line a variable, with what it may have meant. It does not refuse (another tool's BOA_*).
 */
import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/service/config.ts';
import { configFromEnv, unknownEnv } from '../../src/service/config-env.ts';
import { unusedPort } from '../cli/cli-harness.ts';
import { killHard, startProcess } from './process-harness.ts';

const root = resolve(import.meta.dirname, '../..');
const data = mkdtempSync(join(tmpdir(), 'boa-env-unknown-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));

/** The BOA_* names in a source file (or every file under a folder). */
function boaNames(path: string): string[] {
  const full = join(root, path);
  const files = path.includes('.')
    ? [full]
    : readdirSync(full, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(ts|mjs|py)$/.test(f))
        .map((f) => join(full, f));
  return files.flatMap((f) => readFileSync(f, 'utf8').match(/\bBOA_[A-Z0-9_]+/g) ?? []);
}

describe('BOA_* variables boa does not read', () => {
  it('are named with the variable they may have meant, and still ignored', () => {
    const env = {
      BOA_TICK_SECOND: '5',
      BOA_WARMUP_HOURS: '2',
      BOA_SOMETHING_ELSE: 'x',
      BOA_TICK_SECONDS: '30',
      HOME: '/home/x',
    };
    expect(unknownEnv(env)).toEqual([
      { name: 'BOA_SOMETHING_ELSE', hint: 'the variables are in docs/service.md' },
      { name: 'BOA_TICK_SECOND', hint: 'did you mean BOA_TICK_SECONDS?' },
      { name: 'BOA_WARMUP_HOURS', hint: 'warmupHours is set in the --config file only' },
    ]);
    expect(resolveConfig(configFromEnv(env)).tickSeconds).toBe(30);
  });

  it('every BOA_* name the service, the CLI, the executors, the job clients and the scripts read is known', () => {
    const read = [
      ...boaNames('src/service/config-env.ts'),
      ...boaNames('src/service/main.ts'),
      ...boaNames('src/service/execution.ts'),
      ...boaNames('src/cli'),
      ...boaNames('src/cloud'),
      ...boaNames('clients/node'),
      ...boaNames('clients/python'),
      ...boaNames('scripts'),
    ];
    expect(read).toContain('BOA_FIRST_RANK');
    expect(read).toContain('BOA_LOG_FORMAT');
    const env = Object.fromEntries(read.map((name) => [name, 'x']));
    expect(unknownEnv(env)).toEqual([]);
  });

  it('the service logs one warning a variable at start, and starts', async () => {
    const service = await startProcess(['--data', data, '--port', String(await unusedPort())], {
      BOA_TICK_SECOND: '5',
      BOA_URL: 'http://127.0.0.1:1',
      BOA_JOB_ID: '3',
    });
    try {
      const warnings = service
        .output()
        .split('\n')
        .filter((line) => line.includes('"event":"unknown_env"'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({
        level: 40,
        name: 'BOA_TICK_SECOND',
        msg: 'environment variable BOA_TICK_SECOND is not one boa reads, ignored (did you mean BOA_TICK_SECONDS?)',
      });
    } finally {
      await killHard(service.child);
    }
  }, 120_000);
});
