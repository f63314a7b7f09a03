/**
 * The service as `npm start` runs it, in its own process on its own SQLite file: the budget set through
 * the CLI survives `kill -9`, and refused calls leave it untouched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBoa, unusedPort } from '../cli/cli-harness.ts';

const MAIN = resolve(import.meta.dirname, '../../src/service/main.ts');
const dataDir = mkdtempSync(join(tmpdir(), 'boa-crash-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the service and resolves once it listens. */
function start(port: number): Promise<ChildProcess> {
  return new Promise((ready, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, '--data', dataDir, '--port', String(port)],
      {
        env: { ...process.env, BOA_TOKEN: undefined, BOA_CLOUD: undefined },
      },
    );
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('"event":"listening"')) ready(child);
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => fail(new Error(`service exited with ${code}: ${output}`)));
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((gone) => {
    child.removeAllListeners('exit');
    child.on('exit', () => gone());
    child.kill('SIGKILL');
  });
}

describe('the service process', () => {
  it('keeps the budget across kill -9; without the token or with bad input nothing changes', async () => {
    const port = await unusedPort();
    const url = `http://127.0.0.1:${port}`;
    // The CLI finds the generated operator token in the data dir, as it does after `npm start`.
    const boa = (...args: string[]) => runBoa(args, { BOA_URL: url, BOA_DATA_DIR: dataDir }, dataDir);
    const first = await start(port);

    const set = await boa('budget', 'set', '40');
    expect(set.status, set.stderr).toBe(0);
    const anonymous = await fetch(`${url}/v1/budget`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gpuHoursPerHour: 80 }),
    });
    expect(anonymous.status).toBe(401);
    const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const bad = await fetch(`${url}/v1/budget`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ gpuHoursPerHour: 'eighty' }),
    });
    expect(bad.status).toBe(400);

    await killHard(first);
    const second = await start(port);
    const after = await boa('budget', 'get', '--json');
    expect(after.status, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).gpuHoursPerHour).toBe(40);
    await killHard(second);
  }, 60_000);
});
