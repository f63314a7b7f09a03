/**
 * A rollback to the copy after jobs were submitted since the upgrade: the copy does not know them, but
 * their pods may still run. New jobs wait for the executor's first answer and are numbered above every
 * job the newer file gave an id, never sharing an old job's pods, Services, Secrets or log folder; the
 * unknown jobs' replicas are not desired, so the executor stops them (its contract: "removes replicas
 * of jobs no longer desired", test/cloud/executor-contract.ts).
 */
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { migrateAsNewer, TAGS } from '../store/schema-versions.ts';
import { startService } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-rollback-ids-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A Kubernetes executor as the test scripts it: down, or holding `held` replicas besides the desired ones. */
class HeldPods implements Executor {
  readonly kind = 'kubernetes' as const;
  down = false;
  held: ReplicaStatus[] = [];
  desired: DesiredJob[][] = [];
  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    if (this.down) throw new Error('the API server is slow');
    this.desired.push([...desired]);
    const running = desired.flatMap((job) =>
      job.replicas.map((r) => ({
        jobId: r.jobId,
        generation: r.generation,
        rank: r.rank,
        node: r.node,
        phase: 'running' as const,
      })),
    );
    return [...running, ...this.held];
  }
  async close(): Promise<void> {}
}

const workload = { image: 'ghcr.io/example/train:1', command: ['python', 'train.py'] };

/** Submits one job with a workload on a service started on `data` for it, then stopped. */
const submitterOn = (data: string) => async (executor: Executor) => {
  const s = await startService({ dataDir: data, executor, config: { priorRates: { bert: 1 } } });
  const made = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
  await s.close();
  return made;
};

/** Job 1, the copy an upgrade keeps, then jobs 2 and 3 on the upgraded version, in `root/<name>`. */
async function upgradedWithCopy(name: string) {
  const data = join(root, name);
  const file = join(data, 'boa.sqlite');
  const submitOn = submitterOn(data);
  expect((await submitOn(new HeldPods())).body.id).toBe(1);
  copyFileSync(file, `${file}.at-${TAGS.at(-1)}`);
  expect((await submitOn(new HeldPods())).body.id).toBe(2);
  expect((await submitOn(new HeldPods())).body.id).toBe(3);
  return { data, file, submitOn };
}

describe('rollback to the copy', () => {
  it('new jobs wait for the executor and take no id of a job submitted since the upgrade', async () => {
    const { data, file } = await upgradedWithCopy('data');
    migrateAsNewer(file);

    // Rolled back while the executor has not answered; it holds jobs 2's and 3's pods.
    const executor = new HeldPods();
    executor.down = true;
    executor.held = [2, 3].map((jobId) => ({ jobId, generation: 1, rank: 0, node: 'n', phase: 'running' }));
    const s = await startService({
      dataDir: data,
      executor,
      rollbackToCopy: true,
      config: { priorRates: { bert: 1 } },
    });
    try {
      const held = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
      expect(held.status).toBe(503);
      expect(held.body.error.message).toContain('rolled back to a copy');
      executor.down = false;
      s.service.execution.reconcile();
      await s.service.execution.settle();
      // Jobs 2 and 3 are not asked for: the executor stops their pods.
      expect(executor.desired.at(-1)!.map((j) => j.jobId)).not.toContain(2);
      const made = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
      expect(made.status).toBe(201);
      expect(made.body.id).toBe(4);
    } finally {
      await s.close();
    }
  }, 60_000);

  // Found in review: by hand, nothing raised the copy's ids, and the executor is not waited for.
  it('by hand too: new jobs are numbered above the highest id handed out, kept beside the job folders', async () => {
    const { file, submitOn } = await upgradedWithCopy('by-hand');
    // The documented steps without raising the ids: the newer file aside, the copy in its place.
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(`${file}${suffix}`)) renameSync(`${file}${suffix}`, `${file}.newer${suffix}`);
    renameSync(`${file}.at-${TAGS.at(-1)}`, file);
    expect((await submitOn(new HeldPods())).body.id).toBe(4);
  }, 60_000);
});
