import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

export const hasPython = spawnSync('python3', ['--version']).status === 0;

const running = new Set<ChildProcess>();

/** Kills what a failed test left running (call in afterEach). */
export function killLeftovers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** A child process whose output the test watches line by line (the service under test lives here). */
export function watched(command: string, args: string[], env: Record<string, string>, cwd?: string) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', ...env },
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null }>((done, fail) => {
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal }));
  });
  /** Resolves with the first match of `pattern` in the output so far or to come. */
  const waitFor = async (pattern: RegExp, seconds = 20): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const match = pattern.exec(out);
      if (match) return match;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`no ${pattern} in the output of ${[command, ...args].join(' ')}:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /**
   * Runs `work` with the process stopped (SIGSTOP, then SIGCONT), so a test's own steps (an API call, a
   * few ticks: slow on a loaded machine) do not use up the window it has before the trainer moves on.
   * Signals sent meanwhile are delivered when it goes on.
   */
  const frozen = async <T>(work: () => Promise<T>): Promise<T> => {
    child.kill('SIGSTOP');
    try {
      return await work();
    } finally {
      child.kill('SIGCONT');
    }
  };
  return {
    child,
    exited,
    waitFor,
    frozen,
    output: () => out,
    kill: (signal: NodeJS.Signals = 'SIGTERM') => child.kill(signal),
  };
}

/** Runs a command to its end without blocking this process. */
export async function run(command: string, args: string[], env: Record<string, string> = {}, cwd?: string) {
  const proc = watched(command, args, env, cwd);
  const { code } = await proc.exited;
  return { status: code, out: proc.output() };
}

const PYTHON_CLIENT_DIR = resolve(import.meta.dirname, '../../clients/python');

/**
 * Runs the Python client's unittest modules (clients/python/tests) against the boa at `url` with
 * `python` (python3 by default); the output is printed when they fail.
 */
export async function runPythonTests(modules: string | string[], url: string, python = 'python3') {
  const result = await run(
    python,
    ['-m', 'unittest', '-v', ...[modules].flat()],
    { BOA_TEST_URL: url, PYTHONPATH: PYTHON_CLIENT_DIR },
    resolve(PYTHON_CLIENT_DIR, 'tests'),
  );
  if (result.status !== 0) console.error(result.out);
  return result;
}

/** Whether `predicate` holds within `seconds`, checked every 20 ms. */
export async function until(predicate: () => boolean, seconds = 20): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return predicate();
}
