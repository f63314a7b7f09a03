/**
 * Crash trial of `--cloud aws --executor kubernetes`: a service stopped at a chosen point, then booted
 * again over the same data dir, node group and fake Kubernetes API server (kubernetes-crash-harness.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/cloud/kubernetes/names.ts';
import { nodesOf } from '../../src/service/jobs.ts';
import { type CrashWorld, crashWorld, eventually, NS } from './kubernetes-crash-harness.ts';

const worlds: CrashWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

/** The namespace's pod list (the executor's cache), not the per-node reads of foreign GPU pods. */
const podList = (r: { method: string; path: string; watch: boolean }) =>
  r.method === 'GET' && !r.watch && r.path === `/api/v1/namespaces/${NS}/pods`;

/**
 * The first life: a job placed and running, then cancelled; its pods stay Terminating through their grace
 * period (the fake kubelet ends them on finishTermination only), and its idle nodes, chosen for removal,
 * wait for them. The service stops there. Returns the instance ids of the nodes holding those pods.
 */
async function stoppedWhileReplicasStop(w: CrashWorld): Promise<{ id: number; held: string[] }> {
  const first = await w.boot();
  expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await first.boa.service.planner.idle();
  const id = await w.submit(first.api);
  const placed = await eventually(
    'the job placed',
    async () => {
      await first.tick();
      return first.boa.service.job(id);
    },
    (job) => job.allocation.length > 0,
  );
  await eventually(
    'its pods',
    () => w.fake.pods(NS),
    (pods) => pods.length === nodesOf(placed.allocation).length,
  );
  w.fake.kubelet.startPods();
  await first.tick();
  expect((await first.api('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
  await eventually(
    'the pods stopping',
    async () => {
      await first.tick();
      return w.fake.pods(NS);
    },
    (pods) => pods.length > 0 && pods.every((p) => p.metadata.deletionTimestamp),
  );
  await first.tick();
  const instanceOf = (name: string) =>
    (w.fake.nodes().find((n) => n.metadata.name === name)?.spec.providerID as string).split('/').pop()!;
  const held = [...new Set(w.fake.pods(NS).map((p) => p.spec.nodeName as string))].map(instanceOf);
  expect(held.length).toBeGreaterThan(0);
  expect(terminatedOf(w, held)).toEqual([]);
  await first.close();
  return { id, held };
}

const terminatedOf = (w: CrashWorld, ids: readonly string[]) =>
  w.group.terminations.map((t) => t.instanceId).filter((i) => ids.includes(i));

describe('a restart while replicas still stop on nodes being removed', () => {
  it('terminates none of those nodes before the executor has said whether their replicas stopped', async () => {
    const w = await crashWorld();
    worlds.push(w);
    const { id, held } = await stoppedWhileReplicasStop(w);
    // The second life's executor cannot list pods at first (an API server failing at the start).
    w.fake.faults.inject({ status: 403, count: 1_000, match: podList, message: 'injected: pods unreadable' });
    const second = await w.boot();
    await second.tick();
    expect(w.fake.pods(NS).every((p) => p.metadata.deletionTimestamp)).toBe(true);
    expect(terminatedOf(w, held)).toEqual([]);

    // Once the executor reads the pods, the nodes go after their replicas have stopped.
    w.fake.faults.clear();
    await second.tick();
    expect(terminatedOf(w, held)).toEqual([]);
    w.fake.kubelet.finishTermination();
    await eventually(
      'the nodes removed',
      async () => {
        await second.tick();
        return terminatedOf(w, held);
      },
      (ids) => ids.length === held.length,
    );
    expect(w.fake.pods(NS).filter((p) => p.metadata.labels?.[LABELS.jobId] === String(id))).toEqual([]);
  }, 120_000);

  it('an executor that never answers keeps them no longer than the grace period and a minute', async () => {
    const w = await crashWorld();
    worlds.push(w);
    const { held } = await stoppedWhileReplicasStop(w);
    w.fake.faults.inject({ status: 403, count: 1_000, match: podList, message: 'injected: pods unreadable' });
    const second = await w.boot();
    const bootedAt = w.clock.now();
    // 30 s grace + 60 s: kept at the ticks of 0 s and 60 s, terminated by the one at 120 s.
    await second.tick();
    await second.tick();
    expect(terminatedOf(w, held)).toEqual([]);
    await second.tick();
    expect(terminatedOf(w, held).sort()).toEqual([...held].sort());
    expect(w.clock.now() - bootedAt).toBe(180_000);
  }, 120_000);
});
