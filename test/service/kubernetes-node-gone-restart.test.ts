/**
 * A node a running job was placed on is removed while boa is down (AWS replaces the instance, its
 * Kubernetes Node goes and the pod garbage collector takes its pod; the job's other ranks fail at the
 * lost rendezvous). The restarted boa moves the job to nodes that exist as one new generation, counted
 * as no restart of its maxRestarts and with no backoff, and the gone node's GPU-hours end in the ledger
 * when its termination ended, not when the restarted boa saw it gone (kubernetes-crash-harness.ts: real
 * adapters over an emulated node group and the fake API server).
 */
import { afterEach, expect, it } from 'vitest';
import { nodesOf } from '../../src/service/jobs.ts';
import {
  type CrashWorld,
  crashWorld,
  eventually,
  NS,
  podsOf,
  runningFirstLife,
} from './kubernetes-crash-harness.ts';

const worlds: CrashWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

const instanceOf = (w: CrashWorld, node: string) =>
  (w.fake.nodes().find((n) => n.metadata.name === node)?.spec.providerID as string).split('/').pop()!;

it('a node gone while boa was down: the job moves to live nodes once, no restart counted, the node paid until its termination ended', async () => {
  const w = await crashWorld();
  worlds.push(w);
  const { first, id, placed } = await runningFirstLife(w);
  const placedOn = nodesOf(placed.allocation).map((n) => n.node);
  expect(placedOn.length).toBeGreaterThan(1);
  await first.close();

  // While boa is down: the ASG replaces the instance under one rank; its Node and pod go, and the
  // other ranks exit 1 when their peer is lost.
  const gone = placedOn[0]!;
  const goneInstance = instanceOf(w, gone);
  w.group.asg.terminateInstance(goneInstance, false);
  w.group.asg.step();
  w.bridge.sync();
  expect(w.fake.nodes().map((n) => n.metadata.name)).not.toContain(gone);
  for (const pod of w.fake.pods(NS)) w.fake.kubelet.exit(pod.metadata.name as string, 1);
  w.clock.advance(600);

  const second = await w.boot();
  const seenGoneAt = w.clock.now();
  await second.tick();
  const moved = structuredClone(second.boa.service.job(id));
  expect(moved).toMatchObject({
    state: 'running',
    generation: placed.generation + 1,
    restarts: 0,
    restartNotBefore: null,
    failureReason: null,
  });
  expect(nodesOf(moved.allocation).map((n) => n.node)).not.toContain(gone);
  const pods = await eventually(
    'the new generation running',
    async () => {
      await second.tick();
      w.fake.kubelet.startPods();
      return podsOf(w, id);
    },
    (list) =>
      list.length > 0 && list.every((p) => p.generation === moved.generation && p.phase === 'Running'),
  );
  expect(pods.map((p) => p.node).sort()).toEqual(
    nodesOf(moved.allocation)
      .map((n) => n.node)
      .sort(),
  );
  // Still the one generation, nothing counted against the job.
  expect(second.boa.service.job(id)).toMatchObject({ generation: moved.generation, restarts: 0 });

  // The gone node's row ends once, when its termination activity ended (EC2 billed it until it left
  // running: terminated with no hook, so at once), not 600 s later when boa first listed the pool
  // without it (before the fix: 4 GPUs x 600 s = 0.67 GPU-hours over the bill); the others stay open.
  const rows = second.boa.db.$client
    .prepare('select id, gone_at as goneAt from ledger_nodes')
    .all() as Array<{ id: string; goneAt: number | null }>;
  const billedUntil = w.group.asg.instances.find((i) => i.id === goneInstance)!.terminatedAt!;
  const ended = rows.filter((r) => r.id === goneInstance);
  expect(ended).toEqual([{ id: goneInstance, goneAt: expect.any(Number) }]);
  expect(ended[0]!.goneAt!).toBeGreaterThanOrEqual(billedUntil);
  expect(ended[0]!.goneAt! - billedUntil).toBeLessThanOrEqual(60_000);
  expect(ended[0]!.goneAt!).toBeLessThan(seenGoneAt);
  const stillThere = placedOn.slice(1).map((node) => instanceOf(w, node));
  for (const instance of stillThere)
    expect(rows.find((r) => r.id === instance)).toEqual({ id: instance, goneAt: null });
}, 120_000);
