import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { settle } from './local-executor-settle.ts';
import { pidFrom } from './pid-file.ts';

/** Job 1's one replica, rank 0 on local-1, running `command`, at `generation`. */
export const lostJob = (generation: number, command: string[] = ['sleep', '300']): DesiredJob => ({
  jobId: 1,
  generation,
  replicas: [
    {
      jobId: 1,
      generation,
      rank: 0,
      node: 'local-1',
      gpus: 1,
      workload: { command },
      env: { BOA_JOB_ID: '1', BOA_GENERATION: String(generation), NODE_RANK: '0' },
    },
  ],
});

/** Waits up to 20 s for `condition` (returns as soon as it holds; spawns on a loaded machine take seconds). */
export async function until(condition: () => boolean, tries = 800) {
  for (let i = 0; i < tries && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

/**
 * Job 1's generation 1 started by a boa that is then down, and its supervisor killed alone meanwhile
 * (an OOM kill, a `kill -9` of the wrong pid): its command runs on in a session of its own. Returns the
 * command's process group (for `track`, so the test's cleanup kills it) and the dead supervisor's pid.
 */
export async function loseSupervisor(
  dataDir: string,
  desired: DesiredJob,
  track: (group: number) => void,
): Promise<{ group: number; supervisor: number }> {
  const dir = join(dataDir, 'jobs/1/1');
  const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  await settle(first, [desired], (s) => s[0]?.phase === 'running');
  const groupFile = join(dir, '0.group');
  await until(() => existsSync(groupFile));
  const group = Number(readFileSync(groupFile, 'utf8'));
  track(group);
  await first.close();
  const supervisor = (JSON.parse(readFileSync(join(dir, '0.pid'), 'utf8')) as { pid: number }).pid;
  process.kill(supervisor, 'SIGKILL');
  await until(() => !processExists(supervisor));
  return { group, supervisor };
}

/**
 * A Node script (node's handler sees each SIGTERM, where a shell's trap around `sleep` can run once for
 * two): it appends its name to `log` for every SIGTERM and runs on, so only a SIGKILL ends it, and
 * writes `<log>.<name>.pid` once its handler is set. With `worker`, it first starts itself as "worker"
 * in a session of its own (torchrun's agent: Popen(start_new_session=True)), its environment inherited,
 * and passes each SIGTERM on to it 0.3 s later, as torchrun's agent does.
 */
const TERM_LOGGER = `
const { appendFileSync, writeFileSync } = require('node:fs');
const { spawn } = require('node:child_process');
const [log, name, withWorker] = process.argv.slice(2);
const worker = withWorker === 'worker'
  ? spawn(process.execPath, [__filename, log, 'worker'], { detached: true, stdio: 'ignore' })
  : undefined;
process.on('SIGTERM', () => {
  appendFileSync(log, name + '\\n');
  if (worker) setTimeout(() => worker.kill('SIGTERM'), 300);
});
writeFileSync(log + '.' + name + '.pid', String(process.pid));
setInterval(() => {}, 1 << 30);
`;

/** The command running TERM_LOGGER (written into `dir`) as `name`, logging to `log`. */
export function termLogger(dir: string, log: string, name: string, withWorker = false): string[] {
  const script = join(dir, 'term-logger.cjs');
  writeFileSync(script, TERM_LOGGER);
  return [process.execPath, script, log, name, ...(withWorker ? ['worker'] : [])];
}

/** The lines of `file` (none without it). */
export const lines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];

/** The pid TERM_LOGGER named `name` wrote once its handler was set. */
export async function loggerPid(log: string, name: string): Promise<number> {
  return pidFrom(`${log}.${name}.pid`);
}
