/**
 * A job restarted many times keeps the logs of its newest KEPT_GENERATIONS generations only: each holds
 * up to 80 MiB a rank, and a job restarted hundreds of times kept them all until it ended.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { KEPT_GENERATIONS, pruneGenerations } from '../../src/cloud/job-folders.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { settle } from './local-executor-settle.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    killReplicaGroups(join(dir, 'jobs'));
    rmSync(dir, { recursive: true, force: true });
  }
});

const generation = (g: number): DesiredJob => ({
  jobId: 1,
  generation: g,
  replicas: [
    {
      jobId: 1,
      generation: g,
      rank: 0,
      node: 'local-1',
      gpus: 1,
      workload: { command: ['sh', '-c', `echo gen ${g}`] },
      env: {},
    },
  ],
});

it(`keeps the newest ${KEPT_GENERATIONS} generations' logs of a job as new ones start`, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-generations-'));
  dirs.push(dataDir);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    const last = KEPT_GENERATIONS + 4;
    for (let g = 1; g <= last; g++) {
      await settle(executor, [generation(g)], (s) =>
        s.some((r) => r.generation === g && r.phase === 'succeeded'),
      );
    }
    const folders = readdirSync(join(dataDir, 'jobs', '1'));
    // The job's checkpoint folder (it was given none) is kept beside its generations, never pruned.
    expect(folders).toContain('checkpoint');
    const kept = folders
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b);
    expect(kept).toEqual(Array.from({ length: KEPT_GENERATIONS }, (_, i) => last - KEPT_GENERATIONS + 1 + i));
    expect(existsSync(join(dataDir, 'jobs', '1', String(last), '0.log'))).toBe(true);
  } finally {
    await executor.close();
  }
});

it('never deletes a generation a replica still runs in, tracked or only recorded', () => {
  const jobsDir = mkdtempSync(join(tmpdir(), 'boa-generations-'));
  dirs.push(jobsDir);
  for (let g = 1; g <= 5; g++) mkdirSync(join(jobsDir, '1', String(g)), { recursive: true });
  // Generation 1 has a pid record (a replica not adopted yet); generation 2 is tracked.
  writeFileSync(join(jobsDir, '1', '1', '0.pid'), '{}');
  const pruned = pruneGenerations(jobsDir, 1, 2, (g) => g === 2);
  expect(pruned).toEqual([3]);
  expect(readdirSync(join(jobsDir, '1')).map(Number).sort()).toEqual([1, 2, 4, 5]);
});
