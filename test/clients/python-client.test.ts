import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServedBoa, type ServedBoa } from './served.ts';

const CLIENT_DIR = resolve(import.meta.dirname, '../../clients/python');
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasPython) console.warn('python3 not found: the Python job client tests are skipped');

/** Runs a command to its end without blocking this process (the service under test lives here). */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> },
) {
  return new Promise<{ status: number | null; out: string }>((done, fail) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...options.env },
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('error', fail);
    child.on('close', (status) => done({ status, out }));
  });
}

describe.skipIf(!hasPython)('Python job client (clients/python/boa_job.py)', () => {
  let boa: ServedBoa;
  beforeAll(async () => {
    boa = await startServedBoa();
  });
  afterAll(async () => {
    await boa?.close();
  });

  it('passes its unittest suite against a real boa service', { timeout: 120_000 }, async () => {
    const result = await run('python3', ['-m', 'unittest', '-v', 'test_boa_job'], {
      cwd: resolve(CLIENT_DIR, 'tests'),
      env: { BOA_TEST_URL: boa.url, PYTHONPATH: CLIENT_DIR },
    });
    if (result.status !== 0) console.error(result.out);
    expect(result.status).toBe(0);
    // Every test ran (none skipped for want of the service).
    expect(result.out).toMatch(/Ran 10 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
