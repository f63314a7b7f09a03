/**
 * The question a command asks on a terminal (`budget set` cutting to under half, `classes delete`):
 * only "y" or "yes" goes ahead; anything else, Ctrl+D included, keeps things as they are.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hasScript, startCliService } from './cli-harness.ts';

const BOA = resolve(import.meta.dirname, '../../src/cli/boa.mjs');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** `boa args` on a pseudo-terminal; `keys` are typed once the question is on screen. */
function answerOnTerminal(s: { cwd: string; url: string; token: string }, args: string[], keys: string) {
  const command = [process.execPath, BOA, ...args].map((w) => `'${w}'`).join(' ');
  return new Promise<{ status: number | null; output: string }>((done, fail) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: s.cwd,
      env: { ...process.env, BOA_URL: s.url, BOA_TOKEN: s.token, BOA_DATA_DIR: undefined },
    });
    let output = '';
    let typed = false;
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (!typed && output.includes('[y/N]')) {
        typed = true;
        child.stdin.write(keys);
      }
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', fail);
    child.on('close', (status) => done({ status, output }));
  });
}

describe('a question on a terminal', () => {
  it.skipIf(!hasScript)(
    'takes Ctrl+D as no: the class is kept, one line says so, no stack trace',
    async () => {
      const s = await startCliService();
      cleanups.push(s.close);
      const run = await answerOnTerminal(s, ['classes', 'delete', 'ncf'], '\u0004');
      expect(run.output).toContain('delete class ncf?');
      expect(run.output).not.toMatch(/AbortError|\n\s+at /);
      expect(run.output).toContain('boa: class ncf is kept');
      expect(run.status).toBe(1);
      expect(s.repo.listClasses().map((c) => c.name)).toContain('ncf');
    },
    60_000,
  );
});
