/** What a replica's command starts with (env, PATH, process group, signals) and how a SIGTERM from outside is read. */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { job } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

const CLIENT = join(import.meta.dirname, '../../clients/node/boa-job.mjs');

describe('local executor', () => {
  it("keeps the service's own boa and launcher variables from the job; boa's own replica env still reaches it", async () => {
    const dataDir = temp();
    // Its secrets too: its cloud credentials, anything named a secret, password or token.
    const planted = {
      RANK: '7',
      TORCHELASTIC_RUN_ID: 'stale',
      BOA_X: 'secret',
      AWS_SECRET_ACCESS_KEY: 'x',
      DB_PASSWORD: 'x',
      HF_TOKEN: 'x',
      TOKENIZERS_PARALLELISM: 'false',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    try {
      const out = join(dataDir, 'env.txt');
      const base = job([
        'sh',
        '-c',
        `echo "\${RANK-unset} \${TORCHELASTIC_RUN_ID-unset} \${BOA_X-unset} \${AWS_SECRET_ACCESS_KEY-unset} \${DB_PASSWORD-unset} \${HF_TOKEN-unset} \${TOKENIZERS_PARALLELISM-unset} $WORLD_SIZE \${HOME:+home}" > ${out}`,
      ]);
      const desired: DesiredJob = {
        ...base,
        replicas: base.replicas.map((r) => ({ ...r, env: { WORLD_SIZE: '4' } })),
      };
      await settle(executor, [desired], (s) => s[0]?.phase === 'succeeded' || s[0]?.phase === 'failed');
      // Not a secret by its name (TOKENIZERS_...): kept.
      expect(readFileSync(out, 'utf8')).toBe('unset unset unset unset unset unset false 4 home\n');
      // Owner only, whatever the data dir's mode: logs often hold credentials.
      expect(statSync(join(dataDir, 'jobs/1/1')).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'jobs/1')).mode & 0o777).toBe(0o700);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await executor.close();
    }
  });

  it("records the exit of a job whose PATH lacks the supervisor's tools, and runs its command on that PATH", async () => {
    const dataDir = temp();
    // A job's PATH of only its own bin folder (a virtualenv's, say): no date, mv or sed there.
    const bin = join(dataDir, 'venv-bin');
    mkdirSync(bin);
    const out = join(dataDir, 'path.txt');
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    try {
      const base = job(['/bin/sh', '-c', `echo "$PATH" > ${out}`]);
      const desired: DesiredJob = {
        ...base,
        replicas: base.replicas.map((r) => ({ ...r, workload: { ...r.workload, env: { PATH: bin } } })),
      };
      const [status] = await settle(
        executor,
        [desired],
        (s) => s[0]?.phase === 'succeeded' || s[0]?.phase === 'failed',
      );
      expect(status).toMatchObject({ phase: 'succeeded', exitCode: 0 });
      expect(readFileSync(out, 'utf8')).toBe(`${bin}\n`);
    } finally {
      await executor.close();
    }
  });

  it("runs the command in a process group of its own: a job's `kill 0` does not reach its supervisor", async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    // A common cleanup idiom: on exit, signal the whole process group. The job ends by its own SIGTERM
    // (143), a failure of its own, not a stop from outside that would be resumed for free.
    const [status] = await settle(
      executor,
      [job(['sh', '-c', 'trap "kill 0" EXIT; sleep 0.3; echo finished'])],
      (s) => s[0]?.phase === 'failed' || s[0]?.phase === 'succeeded',
    );
    expect(status).toMatchObject({ phase: 'failed', exitCode: 143 });
    expect(status?.interrupted).toBeUndefined();
    expect(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8')).toContain('finished');
    await executor.close();
  });

  /** A trainer on boa's Node client: on a SIGTERM it stops with `exitCode`, after `pkill` of its group. */
  async function stoppedFromOutside(exitCode: number): Promise<ReplicaStatus | undefined> {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const trainer =
      `import { BoaJob } from ${JSON.stringify(CLIENT)};` +
      "const job = new BoaJob({ url: 'http://127.0.0.1:9', jobId: 1, token: 't' });" +
      // Asked before it says it trains: until a program asks, the client leaves SIGTERM its default.
      'job.shouldStop();' +
      "console.log('training');" +
      `setInterval(() => { if (job.shouldStop()) process.exit(${exitCode}); }, 20);`;
    const desired = [job([process.execPath, '--input-type=module', '-e', trainer])];
    const log = join(dataDir, 'jobs/1/1/0.log');
    await settle(executor, desired, () => {
      try {
        return readFileSync(log, 'utf8').includes('training');
      } catch {
        return false;
      }
    });
    // `pkill node`, a kill of the command's group: the supervisor gets nothing.
    process.kill(-Number(readFileSync(join(dataDir, 'jobs/1/1/0.group'), 'utf8')), 'SIGTERM');
    const [status] = await settle(executor, desired, (s) => s[0]?.phase !== 'running');
    await executor.close();
    return status;
  }

  it('reports a job whose client answered a SIGTERM sent to its command alone by exiting 0 as interrupted, not done', async () => {
    const status = await stoppedFromOutside(0);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 0, interrupted: true });
    expect(status?.reason).toMatch(/after a SIGTERM boa did not send/);
  });

  it('still reports a job that exits 1 after such a SIGTERM as failed (a torchrun agent ending its workers after a crash)', async () => {
    const status = await stoppedFromOutside(1);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 1 });
    expect(status?.interrupted).toBeUndefined();
  });

  it('starts the command with HUP, INT and QUIT at their defaults (a background command of sh starts with them ignored)', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    await settle(
      executor,
      [job(['grep', 'SigIgn', '/proc/self/status'])],
      (s) => s[0]?.phase === 'succeeded',
    );
    const ignored = /SigIgn:\s*([0-9a-f]+)/.exec(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8'))?.[1];
    expect(ignored).toBeDefined();
    // Bits 1-3: SIGHUP, SIGINT, SIGQUIT.
    expect(Number.parseInt(ignored!, 16) & 0b111).toBe(0);
  });
});
