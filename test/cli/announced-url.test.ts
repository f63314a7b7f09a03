/**
 * `npm start -- --host 0.0.0.0` (docs: "0.0.0.0 in a container") printed a next command with BOA_URL
 * http://0.0.0.0:PORT, which the CLI did not count as local, so it never read data/token and the
 * newcomer's first command was refused (exit 4). With --host ::1 the printed URL was not a URL at all.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { localUrl } from '../../src/service/config.ts';
import { nextCommand, startLines } from '../../src/service/logging.ts';
import { runBoa, startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function serviceOnEveryAddress() {
  const s = await startCliService();
  cleanups.push(s.close);
  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const srv = serve({ fetch: s.app.fetch, port: 0, hostname: '0.0.0.0' }, () => ready(srv));
  });
  cleanups.push(() => new Promise((closed) => server.close(() => closed())));
  // As main.ts leaves it: the generated token in data/token under the folder the service runs in.
  mkdirSync(join(s.cwd, 'data'));
  writeFileSync(join(s.cwd, 'data', 'token'), `${s.token}\n`, { mode: 0o600 });
  return { s, port: (server.address() as AddressInfo).port };
}

describe('the start block of a service bound to every address', () => {
  it('announces 127.0.0.1, and its next command works from the data dir folder', async () => {
    const { s, port } = await serviceOnEveryAddress();
    const url = localUrl('0.0.0.0', port);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const next = nextCommand({ url, tokenFile: 'data/token', budgetSet: false, jobs: 0 });
    expect(next).toBe(`BOA_URL=${url} npx boa budget set 40`);
    const run = await runBoa(['budget', 'set', '40'], { BOA_URL: url }, s.cwd);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('a BOA_URL of http://0.0.0.0:PORT counts as local: the CLI reads data/token', async () => {
    const { s, port } = await serviceOnEveryAddress();
    const run = await runBoa(['budget', 'set', '40'], { BOA_URL: `http://0.0.0.0:${port}` }, s.cwd);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it.each([
    ['::1', 'http://[::1]:8080'],
    ['::', 'http://127.0.0.1:8080'],
    ['127.0.0.1', 'http://127.0.0.1:8080'],
  ])('--host %s announces %s, a URL the CLI and a browser can use', (host, expected) => {
    const lines = startLines({
      url: localUrl(host, 8080),
      tokenFile: 'data/token',
      dataDir: 'data',
      cloud: 'local',
      localBootSeconds: 90,
      budgetSet: false,
      jobs: 0,
    });
    const url = lines[0]!.replace('boa is listening on ', '');
    expect(url).toBe(expected);
    expect(new URL(url).port).toBe('8080');
  });
});
