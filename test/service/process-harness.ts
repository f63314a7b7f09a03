/** The service as `npm start` runs it, in its own process: start it, wait for it, or watch it fail. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const MAIN = resolve(import.meta.dirname, '../../src/service/main.ts');

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
}

const CLEAN_ENV = {
  BOA_TOKEN: undefined,
  BOA_CLOUD: undefined,
  BOA_DATA_DIR: undefined,
  BOA_PORT: undefined,
};

/** Starts the service and resolves once it logs that it listens; rejects if it exits first. */
export function startProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<ServiceProcess> {
  return new Promise((ready, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      env: { ...process.env, ...CLEAN_ENV, ...env },
    });
    let output = '';
    const service = { child, output: () => output };
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('"event":"listening"')) ready(service);
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => fail(new Error(`service exited with ${code}: ${output}`)));
  });
}

/** Runs the service expecting it to stop by itself (a start-up failure): its exit code and output. */
export function runToExit(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 120_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      env: { ...process.env, ...CLEAN_ENV, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** Stops a service process with SIGKILL and waits until it is gone. */
export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((gone) => {
    if (child.exitCode !== null || child.signalCode !== null) return gone();
    child.removeAllListeners('exit');
    child.on('exit', () => gone());
    child.kill('SIGKILL');
  });
}

/** Resident memory of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb[1]) * 1024;
}
