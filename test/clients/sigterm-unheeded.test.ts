/**
 * A program that uses a job client only to report (a framework callback that reports each epoch and
 * keeps its own checkpoints) never asks shouldStop(). The client's SIGTERM handler used to swallow
 * boa's SIGTERM anyway: the process trained on, with nothing said, until the SIGKILL at the end of the
 * grace period (120 s for every rescale and cancel). Until the program asks, SIGTERM does what it does
 * without the client; once it has asked, the client keeps it so the loop can checkpoint.
 */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hasPython, killLeftovers, until, watched } from './processes.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

const NODE_CLIENT = resolve(import.meta.dirname, '../../clients/node/boa-job.mjs');
const PYTHON_CLIENT_DIR = resolve(import.meta.dirname, '../../clients/python');
vi.setConfig({ testTimeout: 60_000 });

const { boa } = servedBoaForFile();
afterEach(() => killLeftovers());

function executorEnv(job: TestJob) {
  return {
    BOA_URL: boa.url,
    BOA_JOB_ID: String(job.id),
    BOA_JOB_TOKEN: job.token,
    BOA_GENERATION: String(job.generation),
    WORLD_SIZE: String(job.width),
    PYTHONPATH: PYTHON_CLIENT_DIR,
  };
}

/** A training loop that reports every 0.1 s and, if `looks`, checkpoints and exits 0 when told to stop. */
const programs: Record<string, (looks: boolean) => [string, string[]]> = {
  node: (looks) => [
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { BoaJob } from ${JSON.stringify(NODE_CLIENT)};
       const job = BoaJob.fromEnv();
       await job.report(0);
       console.log('training');
       for (;;) {
         if (${looks} && job.shouldStop()) { console.log('checkpoint, stop: ' + job.stopReason); process.exit(0); }
         await new Promise((r) => setTimeout(r, 100));
         await job.report(0);
       }`,
    ],
  ],
  python: (looks) => [
    'python3',
    [
      '-c',
      `import sys, time
from boa_job import BoaJob
job = BoaJob.from_env()
job.report(0)
print('training', flush=True)
while True:
    if ${looks ? 'True' : 'False'} and job.should_stop():
        print('checkpoint, stop: ' + job.stop_reason, flush=True)
        sys.exit(0)
    time.sleep(0.1)
    job.report(0)`,
    ],
  ],
};

describe.each(Object.entries(programs))('the %s client', (name, program) => {
  const skip = name === 'python' && !hasPython;

  it.skipIf(skip)('a program that never asks whether to stop ends at SIGTERM, saying why', async () => {
    const job = await boa.makeJob();
    const [command, args] = program(false);
    const proc = watched(command, args, executorEnv(job));
    await proc.waitFor(/training/);
    proc.kill('SIGTERM');
    // Without the fix it trains on until boa's SIGKILL: not ended within the bound.
    expect(await until(() => proc.child.exitCode !== null || proc.child.signalCode !== null, 15)).toBe(true);
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(proc.output()).toMatch(/SIGTERM before this program asked should_?[sS]top\(\): it ends/);
  });

  it.skipIf(skip)('a program that asks keeps the SIGTERM to checkpoint and exit 0', async () => {
    const job = await boa.makeJob();
    const [command, args] = program(true);
    const proc = watched(command, args, executorEnv(job));
    await proc.waitFor(/training/);
    proc.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    expect(proc.output()).toContain('checkpoint, stop: SIGTERM');
    expect(proc.output()).not.toMatch(/before this program asked/);
  });
});
