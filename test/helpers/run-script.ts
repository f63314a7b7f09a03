import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
export const POLLUX = resolve(REPO, 'data/pollux');

/** Runs an npm script's entry file with tsx, as `npm run -s NAME -- args` would. */
export function runScript(
  script: string,
  args: string[],
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', resolve(REPO, 'scripts', script), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // A script that never ends would block the test runner itself (spawnSync holds its event loop, so
    // no test timeout fires): killed after ten minutes, it fails its test instead.
    timeout: 10 * 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
