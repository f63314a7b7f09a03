import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
export const POLLUX = resolve(REPO, 'data/pollux');

export interface ScriptRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an npm script's entry file with tsx, as `npm run -s NAME -- args` would. `env` is added to this
 * process's environment.
 */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv = {}): ScriptRun {
  const result = spawnSync(process.execPath, ['--import', 'tsx', resolve(REPO, 'scripts', script), ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // A script that never ends would block the test runner itself (spawnSync holds its event loop, so
    // no test timeout fires): killed after ten minutes, it fails its test instead.
    timeout: 10 * 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * runScript without blocking the test's process, so that runs which do not depend on each other go at
 * once (Promise.all). `env` is added to this process's environment.
 */
export function runScriptAsync(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ScriptRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(REPO, 'scripts', script), ...args], {
      cwd: REPO,
      env: { ...process.env, ...env },
      // As runScript: one that never ends fails its test rather than holding the run.
      timeout: 10 * 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}
