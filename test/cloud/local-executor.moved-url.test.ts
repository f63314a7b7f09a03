import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';

/**
 * A service restarted on another port adopts replicas that were told the old one in BOA_URL: they report
 * there until their next generation, and the operator is told so once, by job.
 */
const dirs = localExecutorDirs('boa-moved-url-');
const executors: LocalExecutor[] = [];
afterEach(async () => {
  for (const executor of executors.splice(0)) await executor.close();
  dirs.cleanup();
});

const OLD = 'http://127.0.0.1:8080';
const NEW = 'http://127.0.0.1:9090';

const job = (jobId: number, url: string): DesiredJob => ({
  jobId,
  generation: 1,
  replicas: [
    {
      jobId,
      generation: 1,
      rank: 0,
      node: 'local-1',
      gpus: 1,
      workload: { command: ['sleep', '300'] },
      env: { BOA_URL: url, BOA_JOB_ID: String(jobId), BOA_GENERATION: '1', NODE_RANK: '0' },
    },
  ],
});

function executor(dataDir: string, serviceUrl: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const started = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, logger, serviceUrl });
  executors.push(started);
  const moved = () => lines.filter((l) => l.event === 'replica_url_moved');
  return { executor: started, moved };
}

/** Jobs 1 and 2 running, started by a service at OLD, which then stops (its replicas run on). */
async function runAtOld(dataDir: string): Promise<DesiredJob[]> {
  const desired = [job(1, OLD), job(2, OLD)];
  const { executor: first } = executor(dataDir, OLD);
  await settle(first, desired, (s) => s.length === 2 && s.every((r) => r.phase === 'running'));
  await first.close();
  return desired;
}

describe('local executor: adopted replicas told another BOA_URL', () => {
  it('are named in one warning when the service starts at another address', async () => {
    const dataDir = dirs.temp();
    const desired = await runAtOld(dataDir);
    const { executor: second, moved } = executor(dataDir, NEW);
    expect(moved()).toHaveLength(1);
    expect(moved()[0]).toMatchObject({ level: 40, jobs: [1, 2], was: [OLD], now: NEW });
    expect(moved()[0]?.msg).toContain('running jobs 1, 2 report to BOA_URL http://127.0.0.1:8080');
    expect(moved()[0]?.msg).toContain('next generation');
    // Adopted, not restarted: restarting them would cost their work since the last checkpoint.
    expect((await second.reconcile(desired)).map((s) => s.phase)).toEqual(['running', 'running']);
    await settle(second, [], (s) => s.length === 0);
  });

  it('are not warned about at the same address', async () => {
    const dataDir = dirs.temp();
    const desired = await runAtOld(dataDir);
    const { executor: second, moved } = executor(dataDir, OLD);
    expect(moved()).toEqual([]);
    await settle(second, desired, (s) => s.length === 2);
    await settle(second, [], (s) => s.length === 0);
  });

  it.runIf(existsSync('/proc/self/environ'))(
    "finds the address of a replica recorded without it in its supervisor's environment",
    async () => {
      const dataDir = dirs.temp();
      await runAtOld(dataDir);
      // As an older boa recorded it.
      const file = join(dataDir, 'jobs/1/1/0.pid');
      const { boaUrl, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(boaUrl).toBe(OLD);
      writeFileSync(file, JSON.stringify(older));
      const { executor: second, moved } = executor(dataDir, NEW);
      expect(moved()[0]).toMatchObject({ jobs: [1, 2], was: [OLD] });
      await settle(second, [], (s) => s.length === 0);
    },
  );
});
