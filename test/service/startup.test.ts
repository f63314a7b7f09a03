/**
 * Start-up failures of the real service process: one line on stderr naming the cause, exit code 2 for
 * a setting to fix and 1 for anything else, and nothing changed before it (no resize logged).
 */
import { createServer, type Server } from 'node:net';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';
import { killHard, runToExit, startProcess } from './process-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-startup-'));
let n = 0;
const dir = () => join(root, `data-${n++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function expectOneLine(run: { stderr: string; stdout: string }, pattern: RegExp) {
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^boa: /);
  expect(lines[0]).toMatch(pattern);
  expect(run.stdout).not.toContain('"event":"resize"');
}

describe('a start that cannot succeed', () => {
  it('settings: exit 2 with one line naming the variable, flag or file', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const badProfiles = join(root, 'bad-profiles.json');
    writeFileSync(badProfiles, JSON.stringify({ version: 2, classes: [] }));
    const port = String(await unusedPort());
    const [tick, data, missing, bad, flag, memory] = await Promise.all([
      runToExit(['--data', dir(), '--port', port], { BOA_TICK_SECONDS: '0' }),
      runToExit(['--data', file, '--port', port]),
      runToExit(['--data', dir(), '--port', port, '--profiles', join(root, 'nope.json')]),
      runToExit(['--data', dir(), '--port', port, '--profiles', badProfiles]),
      runToExit(['--data', dir(), '--port', port, '--tick-seconds', '-5']),
      // A token generated into no file: a service nobody could call.
      runToExit(['--data', ':memory:', '--port', port]),
    ]);
    for (const run of [tick, data, missing, bad, flag, memory]) expect(run.code, run.stderr).toBe(2);
    expectOneLine(memory, /--data :memory: keeps no token file: give the operator token with BOA_TOKEN/);
    expectOneLine(tick, /BOA_TICK_SECONDS must be > 0 \(got 0\)/);
    expectOneLine(data, /--data .*a-file is a file; the data dir must be a directory/);
    expectOneLine(missing, /cannot read profiles file .*nope\.json: ENOENT/);
    expectOneLine(bad, /invalid profile: .*bad-profiles\.json version: version must be 1/);
    expectOneLine(flag, /--tick-seconds must be > 0 \(got -5\)/);
  }, 180_000);

  it('port 0 and an empty flag: exit 2 naming them, the data dir not created', async () => {
    // Port 0 bound a random port while replicas were told BOA_URL http://127.0.0.1:0.
    const [flag, env, empty, emptyEnv] = [dir(), dir(), dir(), dir()];
    const [zero, zeroEnv, blank, blankEnv] = await Promise.all([
      runToExit(['--data', flag, '--port', '0']),
      runToExit(['--data', env], { BOA_PORT: '0' }),
      runToExit(['--data', empty, '--port', '']),
      // An empty variable is unset, as shells have it: this one is refused for its tick, not its port.
      runToExit(['--data', emptyEnv, '--port', String(await unusedPort())], {
        BOA_PORT: '',
        BOA_TICK_SECONDS: '0',
      }),
    ]);
    for (const run of [zero, zeroEnv, blank, blankEnv]) expect(run.code, run.stderr).toBe(2);
    expectOneLine(
      zero,
      /--port must be between 1 and 65535 \(0, a random port, is not supported\) \(got 0\)/,
    );
    expectOneLine(zeroEnv, /BOA_PORT must be between 1 and 65535 .*\(got 0\)/);
    expectOneLine(blank, /--port needs a value, got ""/);
    expectOneLine(blankEnv, /BOA_TICK_SECONDS must be > 0/);
    for (const d of [flag, env, empty, emptyEnv]) expect(existsSync(d)).toBe(false);
  }, 180_000);

  it('an empty database: exit 1 naming the file and what to do; the file untouched, no resize', async () => {
    const data = dir();
    await killHard((await startProcess(['--data', data, '--port', String(await unusedPort())])).child);
    const db = join(data, 'boa.sqlite');
    writeFileSync(db, '');
    const run = await runToExit(['--data', data, '--port', String(await unusedPort()), '--budget', '40']);
    expect(run.code).toBe(1);
    expectOneLine(run, new RegExp(`${db} is empty \\(0 bytes\\): restore it from the backup.*--init`));
    expect(statSync(db).size).toBe(0);
  }, 180_000);

  it('a taken port: exit 1 naming the port, before any resize', async () => {
    const port = await unusedPort();
    const holder: Server = createServer();
    await new Promise<void>((ready) => holder.listen(port, '127.0.0.1', ready));
    try {
      const data = dir();
      const run = await runToExit(['--data', data, '--port', String(port), '--budget', '40']);
      expect(run.code).toBe(1);
      expectOneLine(run, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use`));
      // The data dir this start made (database, token, lock) is gone again; one in use is kept whole.
      expect(existsSync(data)).toBe(false);
      const used = dir();
      await killHard((await startProcess(['--data', used, '--port', String(await unusedPort())])).child);
      const again = await runToExit(['--data', used, '--port', String(port)]);
      expect(again.code).toBe(1);
      expect(existsSync(join(used, 'boa.sqlite'))).toBe(true);
      expect(existsSync(join(used, 'token'))).toBe(true);
    } finally {
      holder.close();
    }
  }, 180_000);

  it('a second service on the same data dir: exit 1 naming the first pid; kill -9 leaves no stale lock', async () => {
    const data = dir();
    const first = await startProcess(['--data', data, '--port', String(await unusedPort())]);
    const second = await runToExit(['--data', data, '--port', String(await unusedPort())]);
    expect(second.code).toBe(1);
    expectOneLine(
      second,
      new RegExp(`in use by another boa service \\(pid ${first.child.pid} on host ${hostname()}\\)`),
    );
    await killHard(first.child);
    const restarted = await startProcess(['--data', data, '--port', String(await unusedPort())]);
    await killHard(restarted.child);
  }, 180_000);
});

describe('a stop', () => {
  it('two SIGINTs at once (Ctrl-C under npm): one graceful stop, exit 0', async () => {
    const service = await startProcess(['--data', dir(), '--port', String(await unusedPort())]);
    const exited = new Promise<number | null>((done) => {
      service.child.removeAllListeners('exit');
      service.child.on('exit', (code) => done(code));
    });
    service.child.kill('SIGINT');
    service.child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(service.output().match(/"event":"stopping"/g)).toHaveLength(1);
  });

  it('says that running jobs keep running and are adopted at the next start', async () => {
    const data = dir();
    const config = join(root, 'fast.json');
    writeFileSync(config, JSON.stringify({ local: { bootSeconds: 0 } }));
    const port = await unusedPort();
    const token = 'operator-token-0123456789';
    const args = ['--data', data, '--port', String(port), '--config', config, '--tick-seconds', '1'];
    const service = await startProcess([...args, '--token', token, '--budget', '40']);
    try {
      const api = (method: string, path: string, body?: unknown) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ id: number; state: string }>);
      const { id } = await api('POST', '/v1/jobs', { class: 'cifar10' });
      await expect
        .poll(async () => (await api('GET', `/v1/jobs/${id}`)).state, { timeout: 60_000 })
        .toBe('running');
      const exited = new Promise<number | null>((done) => {
        service.child.removeAllListeners('exit');
        service.child.on('exit', (code) => done(code));
      });
      service.child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(service.output()).toMatch(
        /"runningJobs":1,.*"msg":"stopping; 1 running job keeps running, and the next start on this data dir adopts it"/,
      );
    } finally {
      await killHard(service.child);
    }
  }, 120_000);
});
