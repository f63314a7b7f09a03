/**
 * A restart with another executor while a job it started is active: the new executor cannot see the
 * old one's replicas. From local to kubernetes, the job's processes ran on, never stopped, while its pods
 * failed to start and used up its restarts. The start is refused, naming the job and the way out; back on
 * the old executor the job's replicas are adopted, and once it has ended the switch goes through.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ConfigError } from '../../src/service/config.ts';
import { startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { useKubeconfig } from '../helpers/kubeconfig-env.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { tickUntil } from '../helpers/tick-until.ts';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('local to kubernetes with a job running is refused; the job keeps its replicas; after it ends the switch starts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-exec-switch-'));
  cleanups.push(() => {
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  const fake = await startFakeKubeApi();
  cleanups.push(() => fake.close());
  useKubeconfig(fake.kubeConfig().exportConfig(), cleanups);
  const clock = new ManualClock();
  const config = {
    priorRates: { cifar10: 8 },
    local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
    terminationGraceSeconds: 1,
  };
  const first = await startService({ dataDir, clock, config });
  cleanups.push(first.close);
  expect((await first.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await first.service.planner.idle();
  const made = await first.request('POST', '/v1/jobs', {
    class: 'cifar10',
    workload: { command: ['node', '-e', 'setInterval(() => {}, 1000)'], image: 'busybox' },
  });
  expect(made.status).toBe(201);
  const id = made.body.id as number;
  await tickUntil(first, () => first.service.job(id).state === 'running');
  const running = structuredClone(first.service.job(id));
  await first.close();

  const refused = startService({ dataDir, clock, config: { ...config, executor: 'kubernetes' } });
  await expect(refused).rejects.toThrow(ConfigError);
  await expect(refused).rejects.toThrow(
    `job ${id} ran under the local executor (replicas: processes on this machine), and this start sets ` +
      'executor kubernetes, which cannot see them',
  );
  await expect(refused).rejects.toThrow('Start with executor local (--executor, BOA_EXECUTOR) until');
  // Nothing reached the cluster.
  expect(fake.requests).toEqual([]);

  // Back on the local executor: the job's processes adopted, no restart, same generation.
  const again = await startService({ dataDir, clock, config });
  cleanups.push(again.close);
  await again.ticks(1);
  await again.service.execution.settle();
  expect(again.service.job(id)).toMatchObject({
    state: 'running',
    generation: running.generation,
    restarts: 0,
    allocation: running.allocation,
  });
  expect((await again.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
  await tickUntil(again, () => again.service.execution.nodesWithReplicas.size === 0);
  await again.close();

  const switched = await startService({ dataDir, clock, config: { ...config, executor: 'kubernetes' } });
  cleanups.push(switched.close);
  expect(switched.service.job(id).state).toBe('cancelled');
}, 120_000);
