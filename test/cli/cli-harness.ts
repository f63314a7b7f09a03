import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { serve } from '@hono/node-server';
import { startService } from '../service/harness.ts';

const BOA = resolve(import.meta.dirname, '../../src/cli/boa.mjs');

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `boa` entry as a child process, asynchronously: the service under test lives in this
 * process, so a blocking spawn would stop it from answering. cwd is an empty temp dir, so no stray
 * data/token is found unless a test writes one.
 */
export function runBoa(
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  /** Called with its stderr so far, as it comes (a test waiting for a command to reach a point), and the child (to signal it). */
  onStderr?: (stderr: string, child: ChildProcess) => void,
): Promise<CliRun> {
  const base = { ...process.env };
  for (const key of ['BOA_URL', 'BOA_TOKEN', 'BOA_DATA_DIR']) delete base[key];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BOA, ...args], { cwd, env: { ...base, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      onStderr?.(stderr, child);
    });
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

/**
 * The boa service on a real HTTP port, plus a `boa` runner pointed at it with the operator token.
 * `hold` may keep a request waiting before the service sees it (a client slower than the service).
 */
export async function startCliService(
  options: Parameters<typeof startService>[0] = {},
  hold?: (request: Request) => Promise<void>,
) {
  const booted = await startService(options);
  // With node-server's bindings (the connection), as main.ts serves it: GET /token-proof reads them.
  const fetch = async (request: Request, env?: unknown) => {
    await hold?.(request);
    return booted.app.fetch(request, env);
  };
  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cwd = mkdtempSync(join(tmpdir(), 'boa-cli-'));
  const boa = (
    args: string[],
    env: Record<string, string | undefined> = {},
    onStderr?: (stderr: string, child: ChildProcess) => void,
  ) => runBoa(args, { BOA_URL: url, BOA_TOKEN: booted.token, ...env }, cwd, onStderr);
  const close = async () => {
    await new Promise((closed) => server.close(closed));
    await booted.close();
    rmSync(cwd, { recursive: true, force: true });
  };
  /** Drops every open connection mid-answer, as a service killed and started again would. */
  const cutConnections = () => (server as import('node:http').Server).closeAllConnections();
  return { ...booted, url, cwd, boa, close, cutConnections };
}

/** A local port nothing listens on: bound, then released. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

/** `boa args` on a pseudo-terminal (util-linux script), `answer` typed in: what a person at a shell sees. */
export function onTerminal(s: { cwd: string; url: string; token: string }, args: string[], answer: string) {
  const boa = resolve(import.meta.dirname, '../../src/cli/boa.mjs');
  const command = [process.execPath, boa, ...args].map((w) => `'${w}'`).join(' ');
  return new Promise<{ status: number | null; output: string }>((done, fail) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: s.cwd,
      env: { ...process.env, BOA_URL: s.url, BOA_TOKEN: s.token, BOA_DATA_DIR: undefined },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', fail);
    child.on('close', (status) => done({ status, output }));
    child.stdin.end(answer);
  });
}

/** util-linux `script` gives the CLI a terminal; Debian ships it (bsdutils), as this project's machines. */
export const hasScript = spawnSync('script', ['--version']).status === 0;
