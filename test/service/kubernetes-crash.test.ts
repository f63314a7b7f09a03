/**
 * Crash trial of `--cloud aws --executor kubernetes`: a service stopped at a chosen point, then booted
 * again over the same data dir, node group and fake Kubernetes API server (kubernetes-crash-harness.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/cloud/kubernetes/names.ts';
import { nodesOf } from '../../src/service/jobs.ts';
import {
  type CrashWorld,
  crashWorld,
  eventually,
  killedAfter,
  NS,
  podsOf,
  runningFirstLife,
} from './kubernetes-crash-harness.ts';

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
  const { first, id } = await runningFirstLife(w);
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

describe('a restart in the middle of a rescale', () => {
  it("starts the new generation once, after the old one's pods have stopped, with no restart counted", async () => {
    const w = await crashWorld();
    worlds.push(w);
    const { first, id } = await runningFirstLife(w);
    // A copy: job() gives the live state.
    const before = structuredClone(first.boa.service.job(id));
    // A lower budget: the job is narrowed, its old generation's pods stop (Terminating through their
    // grace period), and the new generation waits for them. The service stops there.
    expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 8 })).status).toBe(200);
    await first.boa.service.planner.idle();
    const moved = await eventually(
      'the job narrowed',
      async () => {
        await first.tick();
        return first.boa.service.job(id);
      },
      (job) => job.generation !== before.generation,
    ).then((job) => structuredClone(job));
    await eventually(
      'the old pods stopping',
      async () => {
        await first.tick();
        return podsOf(w, id);
      },
      (pods) => pods.length > 0 && pods.every((p) => p.stopping),
    );
    expect(podsOf(w, id).every((p) => p.generation === before.generation)).toBe(true);
    const terminationsBefore = w.group.terminations.length;
    await first.close();

    const second = await w.boot();
    await second.tick();
    expect(second.boa.service.job(id)).toMatchObject({ generation: moved.generation, state: 'running' });
    // Nothing of the new generation while the old one stops, and no node of a stopping pod terminated.
    expect(podsOf(w, id).every((p) => p.generation === before.generation && p.stopping)).toBe(true);
    expect(w.group.terminations.length).toBe(terminationsBefore);
    w.fake.kubelet.finishTermination();
    const job = second.boa.service.job(id);
    const pods = await eventually(
      'the new generation running',
      async () => {
        await second.tick();
        w.fake.kubelet.startPods();
        return podsOf(w, id);
      },
      (list) => list.length === nodesOf(job.allocation).length && list.every((p) => !p.stopping),
    );
    // One pod per rank of the new generation, on the job's nodes.
    expect(pods.every((p) => p.generation === moved.generation)).toBe(true);
    expect(new Set(pods.map((p) => p.name)).size).toBe(pods.length);
    expect(pods.map((p) => p.node).sort()).toEqual(
      nodesOf(job.allocation)
        .map((n) => n.node)
        .sort(),
    );
    await second.tick();
    expect(second.boa.service.job(id)).toMatchObject({
      state: 'running',
      generation: moved.generation,
      restarts: 0,
    });
    // The group no larger than the budget allows (8 GPU-hours per hour: 2 nodes of 4 GPUs).
    expect(w.group.group.desiredSize).toBeLessThanOrEqual(2);
  }, 120_000);
});

describe('a restart in the middle of a job end', () => {
  it('rank 0 exited 0 while boa was down: the job is done once, ended when its pod did, its objects removed', async () => {
    const w = await crashWorld();
    worlds.push(w);
    const { first, id } = await runningFirstLife(w);
    const { generation } = first.boa.service.job(id);
    await first.close();
    const stoppedAt = w.clock.now();
    // While boa is down, rank 0 ends its run; minutes pass.
    w.fake.kubelet.exit(`${podsOf(w, id).find((p) => p.name.endsWith('-r0'))!.name}`, 0);
    w.clock.advance(300);

    const second = await w.boot();
    await second.tick();
    const job = second.boa.service.job(id);
    expect(job).toMatchObject({ state: 'done', restarts: 0 });
    // No pod made for it after its end: the pods it ever had are its first generation's.
    const created = w.logs.filter((l) => l.event === 'kube.pod.created' && l.jobId === id);
    expect(created.length).toBeGreaterThan(0);
    expect(created.every((l) => l.generation === generation)).toBe(true);
    await eventually(
      'its pods and Service gone',
      async () => {
        await second.tick();
        w.fake.kubelet.finishTermination();
        return { pods: podsOf(w, id), services: w.fake.services(NS).length };
      },
      (left) => left.pods.length === 0 && left.services === 0,
    );
    // Allocated until its pod ended (stamped by the wall clock, behind boa's: until the last sample
    // before the stop), not until boa saw it at the restart.
    const after = second.boa.repo.ledger.ledgerTotals(stoppedAt, w.clock.now());
    expect(after.allocatedGpuMs).toBe(0);
  }, 120_000);
});

describe('a restart after UpdateNodegroupConfig was sent, before its answer was stored', () => {
  it('settles the stored resize from the group, sends it no second time, and runs the job on one set of pods', async () => {
    const w = await crashWorld();
    worlds.push(w);
    const first = await w.boot(killedAfter('setDesiredSize'));
    expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await first.boa.service.planner.idle();
    const id = await w.submit(first.api);
    await first.tick();
    // The scale-out went through in EKS; the service died before storing its answer.
    expect(w.group.updateCalls()).toHaveLength(1);
    const sent = w.group.group.desiredSize;
    expect(sent).toBeGreaterThan(0);
    await first.close();

    const second = await w.boot();
    expect(second.boa.repo.lastResize()).toMatchObject({
      status: 'requested',
      requested: sent,
      updateId: null,
    });
    const placed = await eventually(
      'the job placed',
      async () => {
        await second.tick();
        return structuredClone(second.boa.service.job(id));
      },
      (job) => job.allocation.length > 0,
    );
    expect(w.group.updateCalls()).toHaveLength(1);
    expect(second.boa.repo.lastResize()).toMatchObject({ status: 'applied', requested: sent });
    expect(w.logs.some((l) => l.event === 'nodes.drift')).toBe(false);
    // Within the group's maximum, and within what the budget allows (30 GPU-hours per hour: 7 nodes).
    expect(w.group.group.desiredSize).toBeLessThanOrEqual(4);
    const pods = await eventually(
      'its pods',
      () => podsOf(w, id),
      (list) => list.length === nodesOf(placed.allocation).length,
    );
    expect(new Set(pods.map((p) => p.name)).size).toBe(pods.length);
    expect(pods.every((p) => p.generation === placed.generation)).toBe(true);
  }, 120_000);
});

describe('a restart after TerminateInstanceInAutoScalingGroup was sent, before its answer was stored', () => {
  it("terminates each spare node once, lowers the size once for each, and never a running job's node", async () => {
    const w = await crashWorld();
    worlds.push(w);
    const first = await w.boot(killedAfter('terminate'));
    expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await first.boa.service.planner.idle();
    const id = await w.submit(first.api);
    await eventually(
      'the job running on 4 nodes',
      async () => {
        await first.tick();
        w.fake.kubelet.startPods();
        return podsOf(w, id);
      },
      (pods) => pods.length === 4 && pods.every((p) => !p.stopping),
    );
    // A lower budget narrows the job; the spare nodes go once its old pods have stopped.
    expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 8 })).status).toBe(200);
    await first.boa.service.planner.idle();
    await eventually(
      'the first termination (the service dies with it)',
      async () => {
        // Not after it: a dead service ticks no more.
        if (w.group.terminations.length > 0) return w.group.terminations.length;
        await first.tick();
        w.fake.kubelet.finishTermination();
        w.fake.kubelet.startPods();
        return w.group.terminations.length;
      },
      (n) => n > 0,
    );
    expect(w.group.terminations).toHaveLength(1);
    await first.close();

    const second = await w.boot();
    const settled = await eventually(
      'the spare nodes gone',
      async () => {
        await second.tick();
        w.fake.kubelet.finishTermination();
        w.fake.kubelet.startPods();
        const job = second.boa.service.job(id);
        return {
          live: w.group.asg.live().length,
          desired: w.group.group.desiredSize,
          jobNodes: nodesOf(job.allocation).map((n) => n.node),
          pods: podsOf(w, id),
        };
      },
      (s) =>
        s.live === s.jobNodes.length &&
        s.pods.length === s.jobNodes.length &&
        s.pods.every((p) => !p.stopping),
    );
    const terminated = w.group.terminations.map((t) => t.instanceId);
    expect(new Set(terminated).size).toBe(terminated.length);
    expect(terminated).toHaveLength(4 - settled.jobNodes.length);
    // Lowered once per termination: the group holds the job's nodes, no fewer.
    expect(settled.desired).toBe(settled.jobNodes.length);
    const jobInstances = w.group.asg.live().map((i) => i.id);
    expect(terminated.some((i) => jobInstances.includes(i))).toBe(false);
    expect(second.boa.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
  }, 120_000);
});

describe('a restart after a pod create was sent, before the rest of its generation', () => {
  it('makes the missing ranks once and keeps the pod made before the stop, one pod per rank', async () => {
    const w = await crashWorld();
    worlds.push(w);
    const first = await w.boot();
    expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await first.boa.service.planner.idle();
    const id = await w.submit(first.api);
    // The first pod created is the last thing this life does: its database takes no more writes, and
    // its other creates never reach the API server (refused, as a dead process sends nothing).
    const podPosts = (r: { method: string; path: string }) =>
      r.method === 'POST' && r.path === `/api/v1/namespaces/${NS}/pods`;
    const watch = w.fake.store.subscribe(w.fake.store.currentVersion(), (event) => {
      if (event.resource !== 'pods' || event.type !== 'ADDED') return;
      if (watch !== 'expired') watch.stop();
      first.kill();
      w.fake.faults.inject({ status: 403, count: 1_000, match: podPosts, message: 'injected: dead' });
    });
    await eventually(
      'the first pod',
      async () => {
        await first.tick();
        return podsOf(w, id);
      },
      (pods) => pods.length > 0,
    );
    const [made, ...others] = w.fake.pods(NS);
    expect(others).toEqual([]);
    await first.close();
    w.fake.faults.clear();

    const second = await w.boot();
    const job = structuredClone(second.boa.service.job(id));
    const pods = await eventually(
      'every rank',
      async () => {
        await second.tick();
        return w.fake.pods(NS);
      },
      (list) => list.length === nodesOf(job.allocation).length,
    );
    expect(new Set(pods.map((p) => p.metadata.labels?.[LABELS.rank])).size).toBe(pods.length);
    expect(pods.every((p) => p.metadata.labels?.[LABELS.generation] === String(job.generation))).toBe(true);
    // The pod made before the stop was kept, not made again.
    expect(pods.find((p) => p.metadata.name === made!.metadata.name)?.metadata.uid).toBe(made!.metadata.uid);
    w.fake.kubelet.startPods();
    await second.tick();
    expect(second.boa.service.job(id)).toMatchObject({
      state: 'running',
      generation: job.generation,
      restarts: 0,
    });
  }, 120_000);
});
