import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';

/**
 * A service restarted on another port adopts replicas that were told the old one in BOA_URL: it writes
 * the new one to their BOA_URL_FILE, which boa's job clients re-read, and the operator is told so once,
 * by job. Replicas without that file (started by an older boa) report to the old address until their
 * next generation, which their warning says.
 */
const dirs = localExecutorDirs('boa-moved-url-');
const executors: LocalExecutor[] = [];
afterEach(async () => {
  for (const executor of executors.splice(0)) await executor.close();
  dirs.cleanup();
});

const OLD = 'http://127.0.0.1:8080';
const NEW = 'http://127.0.0.1:9090';

const job = (jobId: number, url: string, workingDir?: string): DesiredJob => ({
  jobId,
  generation: 1,
  replicas: [
    {
      jobId,
      generation: 1,
      rank: 0,
      node: 'local-1',
      gpus: 1,
      // It says where its BOA_URL_FILE is, as a job's client would read it. Written aside and renamed:
      // the redirect creates the file before printf fills it, and the test waits for the file to exist.
      workload: {
        command: [
          'sh',
          '-c',
          'printf %s "$BOA_URL_FILE" > "$0.env.tmp" && mv "$0.env.tmp" "$0.env"; exec sleep 300',
          `job${jobId}`,
        ],
        workingDir,
      },
      env: { BOA_URL: url, BOA_JOB_ID: String(jobId), BOA_GENERATION: '1', NODE_RANK: '0' },
    },
  ],
});

/** What replica `jobId`'s BOA_URL_FILE names: its path as its command got it, and what it holds. */
function urlFileOf(dataDir: string, jobId: number) {
  const path = readFileSync(join(dataDir, `job${jobId}.env`), 'utf8');
  return { path, url: readFileSync(path, 'utf8').trim() };
}

function executor(dataDir: string, serviceUrl: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const started = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, logger, serviceUrl });
  executors.push(started);
  const moved = () => lines.filter((l) => l.event === 'replica_url_moved');
  const adopted = () => lines.filter((l) => l.event === 'replica_adopted');
  return { executor: started, moved, adopted };
}

/** Jobs 1 and 2 running, started by a service at OLD, which then stops (its replicas run on). */
async function runAtOld(dataDir: string): Promise<DesiredJob[]> {
  const desired = [job(1, OLD, dataDir), job(2, OLD, dataDir)];
  const { executor: first } = executor(dataDir, OLD);
  await settle(first, desired, (s) => s.length === 2 && s.every((r) => r.phase === 'running'));
  await first.close();
  for (const jobId of [1, 2]) {
    const envFile = join(dataDir, `job${jobId}.env`);
    for (let i = 0; i < 800 && !existsSync(envFile); i++) await new Promise((r) => setTimeout(r, 25));
  }
  return desired;
}

/** Removes the replicas' BOA_URL_FILEs, as a boa older than them started them without. */
function asStartedByAnOlderBoa(dataDir: string) {
  for (const jobId of [1, 2]) rmSync(join(dataDir, `jobs/${jobId}/1/0.url`));
}

describe('local executor: adopted replicas told another BOA_URL', () => {
  it('are told the new address in their BOA_URL_FILE, and named in one warning', async () => {
    const dataDir = dirs.temp();
    const desired = await runAtOld(dataDir);
    expect(urlFileOf(dataDir, 1)).toEqual({ path: expect.stringMatching(/\/jobs\/1\/1\/0\.url$/), url: OLD });
    expect(urlFileOf(dataDir, 2)).toEqual({ path: expect.stringMatching(/\/jobs\/2\/1\/0\.url$/), url: OLD });
    const { executor: second, moved } = executor(dataDir, NEW);
    expect(urlFileOf(dataDir, 1).url).toBe(NEW);
    expect(urlFileOf(dataDir, 2).url).toBe(NEW);
    expect(moved()).toHaveLength(1);
    expect(moved()[0]).toMatchObject({ level: 40, jobs: [1, 2], was: [OLD], now: NEW, told: true });
    expect(moved()[0]?.msg).toContain(
      'running jobs 1, 2 were started with BOA_URL http://127.0.0.1:8080, not http://127.0.0.1:9090: ' +
        'told the new address in their BOA_URL_FILE',
    );
    // Adopted, not restarted: restarting them would cost their work since the last checkpoint.
    expect((await second.reconcile(desired)).map((s) => s.phase)).toEqual(['running', 'running']);
    await second.close();
    // Started again at the new address: they report there now, nothing to say.
    const { executor: third, moved: movedAgain } = executor(dataDir, NEW);
    expect(movedAgain()).toEqual([]);
    await settle(third, [], (s) => s.length === 0);
  });

  it('are not warned about at the same address', async () => {
    const dataDir = dirs.temp();
    const desired = await runAtOld(dataDir);
    const { executor: second, moved, adopted } = executor(dataDir, OLD);
    expect(moved()).toEqual([]);
    // Each adoption logged by its job, generation and rank, not only its node and folder.
    const named = adopted().map((l) => [l.jobId, l.generation, l.rank, l.node, l.msg]);
    // In the order the folders are read (the file system's): sorted by job.
    expect(named.sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [1, 1, 0, 'local-1', "adopted job 1's running replica (generation 1, rank 0)"],
      [2, 1, 0, 'local-1', "adopted job 2's running replica (generation 1, rank 0)"],
    ]);
    expect(urlFileOf(dataDir, 1).url).toBe(OLD);
    await settle(second, desired, (s) => s.length === 2);
    await settle(second, [], (s) => s.length === 0);
  });

  it('started without a BOA_URL_FILE, are warned about as reporting to the old address', async () => {
    const dataDir = dirs.temp();
    const desired = await runAtOld(dataDir);
    asStartedByAnOlderBoa(dataDir);
    const { executor: second, moved } = executor(dataDir, NEW);
    expect(moved()).toHaveLength(1);
    expect(moved()[0]).toMatchObject({ level: 40, jobs: [1, 2], was: [OLD], now: NEW, told: false });
    expect(moved()[0]?.msg).toContain('running jobs 1, 2 report to BOA_URL http://127.0.0.1:8080');
    expect(moved()[0]?.msg).toContain('next generation');
    expect(existsSync(join(dataDir, 'jobs/1/1/0.url'))).toBe(false);
    expect((await second.reconcile(desired)).map((s) => s.phase)).toEqual(['running', 'running']);
    await settle(second, [], (s) => s.length === 0);
  });

  it('whose BOA_URL_FILE cannot be rewritten, are warned about as reporting to the old address', async () => {
    const dataDir = dirs.temp();
    await runAtOld(dataDir);
    // Its temporary file a folder: the write fails, whoever runs the test (root ignores permissions).
    mkdirSync(join(dataDir, 'jobs/1/1/0.url.tmp'));
    const { executor: second, moved } = executor(dataDir, NEW);
    expect(moved().map(({ jobs, told }) => ({ jobs, told }))).toEqual([
      { jobs: [2], told: true },
      { jobs: [1], told: false },
    ]);
    expect(moved()[1]?.msg).toContain('running job 1 reports to BOA_URL http://127.0.0.1:8080');
    expect(urlFileOf(dataDir, 1).url).toBe(OLD);
    expect(urlFileOf(dataDir, 2).url).toBe(NEW);
    await settle(second, [], (s) => s.length === 0);
  });

  it.runIf(existsSync('/proc/self/environ'))(
    "finds the address of a replica recorded without it in its supervisor's environment",
    async () => {
      const dataDir = dirs.temp();
      await runAtOld(dataDir);
      // As an older boa recorded it.
      asStartedByAnOlderBoa(dataDir);
      const file = join(dataDir, 'jobs/1/1/0.pid');
      const { boaUrl, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(boaUrl).toBe(OLD);
      writeFileSync(file, JSON.stringify(older));
      const { executor: second, moved } = executor(dataDir, NEW);
      expect(moved()[0]).toMatchObject({ jobs: [1, 2], was: [OLD], told: false });
      await settle(second, [], (s) => s.length === 0);
    },
  );
});
