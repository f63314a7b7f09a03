/**
 * `boa jobs logs` against a server that is not boa (another service at BOA_URL, a proxy's page): the
 * page was printed as the job's log and the command exited 0; followed, it was printed, then asked again
 * (found in review). A log answer boa sends always names its generation (`boa-generation`), so one
 * without it is refused as the JSON answers are: one line, exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBoa } from './cli-harness.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A server answering every request 200 with a web page, counting them. */
async function aWebPage() {
  let asked = 0;
  const server = createServer((_req, res) => {
    asked += 1;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>welcome</html>\n');
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const cwd = mkdtempSync(join(tmpdir(), 'boa-logs-not-boa-'));
  cleanups.push(async () => {
    await new Promise((closed) => server.close(closed));
    rmSync(cwd, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    asked: () => asked,
    boa: (args: string[]) => runBoa(args, { BOA_URL: url, BOA_TOKEN: 'some-token' }, cwd),
  };
}

const REFUSED =
  /^boa: unexpected answer from http:\/\/127\.0\.0\.1:\d+: GET \/v1\/jobs\/7\/logs\?\S+ answered without the header boa-generation \(is BOA_URL a boa service\?\)\n$/;

describe('jobs logs given a server that is not boa', () => {
  it('is exit 1 and one line, nothing printed as the log', async () => {
    const server = await aWebPage();
    const run = await server.boa(['jobs', 'logs', '7']);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(REFUSED);
    expect(run.status).toBe(1);
  });

  it('followed: the same, asked once, not followed on', async () => {
    const server = await aWebPage();
    const run = await server.boa(['jobs', 'logs', '7', '--follow']);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(REFUSED);
    expect(run.status).toBe(1);
    expect(server.asked()).toBe(1);
  });
});
