import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/service/config.ts';
import { chooseLogFormat, createLogger, nextCommand, startLines } from '../../src/service/logging.ts';
import { unusedPort } from '../cli/cli-harness.ts';
import { MAIN } from './process-harness.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

function sink() {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return { out, text: () => chunks.join('') };
}

describe('log format', () => {
  it('is readable on a terminal and JSON elsewhere, unless asked for; a bad value names the choices', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('auto', true)).toBe('pretty');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
    expect(() => chooseLogFormat('yaml', true)).toThrow(ConfigError);
    expect(() => chooseLogFormat('yaml', true)).toThrow(
      '--log-format must be one of auto, pretty, json, got "yaml"',
    );
  });

  it('writes a pretty line with the time, level and message, and JSON with every field', () => {
    const pretty = sink();
    createLogger('info', 'pretty', pretty.out).info({ event: 'plan', planId: 3 }, 'plan computed');
    expect(pretty.text()).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: plan computed \{"planId":3\}\n$/);

    const json = sink();
    createLogger('info', 'json', json.out).info({ event: 'plan', planId: 3 }, 'plan computed');
    expect(JSON.parse(json.text())).toMatchObject({
      level: 30,
      event: 'plan',
      planId: 3,
      msg: 'plan computed',
    });
  });

  it('starts with the URL, the dashboard, the token file and the next command of the first run', () => {
    const lines = startLines({
      url: 'http://127.0.0.1:8080',
      tokenFile: join(process.cwd(), 'data/token'),
      dataDir: join(process.cwd(), 'data'),
      cloud: 'local',
      localBootSeconds: 90,
      budgetSet: false,
      jobs: 0,
    });
    expect(lines).toEqual([
      'boa is listening on http://127.0.0.1:8080',
      '  dashboard   http://127.0.0.1:8080/  (paste the operator token once)',
      '  token       data/token',
      '  data        data/boa.sqlite  (cloud local: emulated nodes, ready 90 s after they are asked for)',
      '  next        npx boa budget set 40',
    ]);
    expect(nextCommand({ budgetSet: true, jobs: 0 })).toMatch(/^npx boa jobs submit cifar10 /);
    expect(nextCommand({ budgetSet: true, jobs: 2 })).toBe('npx boa status');
    // The default data dir as configured (relative): nothing to add.
    expect(
      nextCommand({ budgetSet: false, jobs: 0, url: 'http://127.0.0.1:8080', tokenFile: 'data/token' }),
    ).toBe('npx boa budget set 40');
    // Another port and data dir: what the CLI needs to reach this service from here.
    expect(
      nextCommand({
        budgetSet: false,
        jobs: 0,
        url: 'http://127.0.0.1:8082',
        tokenFile: '/tmp/boa two/token',
      }),
    ).toBe("BOA_URL=http://127.0.0.1:8082 BOA_DATA_DIR='/tmp/boa two' npx boa budget set 40");
  });
});

/** Starts the service, collects stdout until `until` matches, then stops it with SIGTERM. */
async function startUntil(args: string[], until: RegExp): Promise<string> {
  const port = String(await unusedPort());
  const dir = mkdtempSync(join(tmpdir(), 'boa-logging-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return new Promise((done, fail) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, '--data', dir, '--port', port, ...args],
      { env: { ...process.env, BOA_TOKEN: undefined, BOA_LOG_FORMAT: undefined, BOA_LOG_LEVEL: undefined } },
    );
    cleanups.push(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      if (until.test(out)) {
        child.kill('SIGTERM');
        done(out);
      }
    });
    child.stderr?.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => fail(new Error(`exited with ${code} before ${until}: ${out}`)));
  });
}

describe('npm start output', () => {
  it('with --log-format pretty begins with the start-up block; no per-tick metrics at info', async () => {
    // Another port and data dir than the CLI's defaults: the next command says how to reach them.
    const out = await startUntil(
      ['--log-format', 'pretty'],
      /next {8}BOA_URL=http:\/\/127\.0\.0\.1:\d+ BOA_DATA_DIR=\S+ npx boa budget set 40\n/,
    );
    const first = out.split('\n')[0];
    expect(first).toMatch(/^boa is listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(out).toMatch(/^ {2}token {7}.*token$/m);
    expect(out).not.toContain('"level"');
    expect(out).not.toMatch(/metrics/);
  }, 60_000);

  it('not on a terminal logs JSON lines, the listening event naming the dashboard and the next command', async () => {
    const out = await startUntil([], /"event":"listening".*\n/);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const listening = lines.find((l) => l.event === 'listening');
    expect(listening).toMatchObject({ cloud: 'local' });
    expect(listening?.next).toBe(
      `BOA_URL=${listening?.url as string} BOA_DATA_DIR=${dirname(listening?.tokenFile as string)} npx boa budget set 40`,
    );
    expect(listening?.dashboard).toBe(`${listening?.url as string}/`);
    expect(lines.some((l) => l.event === 'metrics')).toBe(false);
  }, 60_000);
});
