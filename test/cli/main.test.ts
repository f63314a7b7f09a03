/**
 * The `boa` entry itself: what happens around every command, whatever it prints.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const BOA = resolve(import.meta.dirname, '../../src/cli/boa.mjs');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** `boa args | head -c 1`, in bash: boa's exit status and what it wrote to stderr. */
function intoHead(args: string[], env: Record<string, string>, cwd: string) {
  const pipeline = '"$0" "$@" | head -c 1 >/dev/null; exit "${PIPESTATUS[0]}"';
  return new Promise<{ status: number | null; stderr: string }>((done, fail) => {
    const child = spawn('bash', ['-c', pipeline, process.execPath, BOA, ...args], {
      cwd,
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stderr }));
  });
}

describe('boa writing into a pipe its reader closed', () => {
  it('stops quietly, as cat does, with no stack trace (boa history export | head)', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    // An export of many arrivals (400 kB): far more than a pipe holds, so boa still writes when head exits.
    const arrivals = Array.from({ length: 10_000 }, (_, i) => ({
      className: 'cifar10',
      submittedAt: s.clock.now() - 60_000 - i * 1000,
    }));
    expect((await s.request('POST', '/v1/history', { source: 'big', arrivals })).status).toBe(200);
    const run = await intoHead(['history', 'export'], { BOA_URL: s.url, BOA_TOKEN: s.token }, s.cwd);
    expect(run.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(run.status).toBe(0);
  }, 60_000);
});
