import { SetInstanceProtectionCommand } from '@aws-sdk/client-auto-scaling';
import { UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { runBoa } from '../cli/cli-harness.ts';
import { nodeName, type NodesWorld, nodesWorld } from './nodes-harness.ts';
import { gracefulExecutor } from './nodes/graceful-executor.ts';

/** boa on an EKS node group that behaves as AWS does (issue 11's must-show cases, except restarts). */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});
function world(options: Parameters<typeof nodesWorld>[0] = {}) {
  const w = nodesWorld(options);
  worlds.push(w);
  return w;
}

describe('scale-in: boa chooses the node that goes', () => {
  it('terminates the idle node, not the busy one the ASG default policy would pick; the busy job keeps its generation', async () => {
    const w = world();
    const { tick, job, boa, cordons } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3); // launched, EC2 running, Kubernetes Ready, placed
    const live = w.group.asg.live();
    expect(live).toHaveLength(2);
    expect(a.allocation).toHaveLength(4);
    expect(b.allocation).toHaveLength(4);
    // What the ASG itself would remove if the desired size dropped from 2 to 1:
    const asgPick = w.group.asg.defaultPolicyVictim(live);
    const busyName = nodeName(w.group, asgPick!.id);
    const [busy, idle] = a.allocation[0] === busyName ? [a, b] : [b, a];
    expect(busy.allocation.every((n) => n === busyName)).toBe(true);
    const generation = busy.generation;

    boa.service.finishJob(idle.id, 'done');
    await tick(2);

    expect(w.group.terminations).toHaveLength(1);
    expect(w.group.terminations[0]).toMatchObject({ decrement: true });
    expect(w.group.terminations[0]?.instanceId).not.toBe(asgPick?.id);
    expect(w.group.asg.live().map((i) => i.id)).toEqual([asgPick?.id]);
    expect(w.group.group.desiredSize).toBe(1);
    // Never scaled in by lowering the desired size.
    const sizes = w.group.eksMock
      .commandCalls(UpdateNodegroupConfigCommand)
      .map((c) => c.args[0].input.scalingConfig?.desiredSize);
    expect(sizes).toEqual([2]);
    expect(boa.service.job(busy.id).generation).toBe(generation);
    expect(cordons()).toEqual([nodeName(w.group, w.group.terminations[0]!.instanceId)]);
    expect(w.logs.events()).toContain('node.chosen');
  });
});

describe('Kubernetes node truth', () => {
  it('places nothing on a node that is EC2 running but not Ready; terminates it after provisionSeconds, charged in the ledger', async () => {
    const w = world({ provisionSeconds: 600 });
    const { tick, job, boa, status } = await w.start();
    const j = job(4);
    await tick(1); // the group is asked for one node
    const broken = w.group.asg.live()[0]!.id;
    w.group.kube.neverReadies(broken);
    await tick(3); // EC2 running, registered, never Ready
    expect(j.allocation).toEqual([]);
    expect((await status()).nodeGroup.notReady).toEqual({ 'not-ready': 1 });
    expect(w.group.terminations).toEqual([]);

    await tick(8); // 600 s after launch
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([broken]);
    expect(w.logs.lines.find((l) => l.event === 'node.provision-timeout')).toMatchObject({ nodeId: broken });
    // A replacement was asked for and runs the job once it is Ready.
    await tick(3);
    expect(j.allocation).toHaveLength(4);
    expect(j.allocation[0]).not.toBe(nodeName(w.group, broken));
    // The broken node was paid from launch until it was seen gone: 4 GPUs for at least 600 s.
    const brokenInstance = w.group.asg.instances.find((i) => i.id === broken)!;
    const row = boa.db.$client
      .prepare('select launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?')
      .get(broken) as { launchedAt: number; goneAt: number | null };
    expect(row.launchedAt).toBe(brokenInstance.launchedAt);
    expect(row.goneAt).toBeGreaterThanOrEqual(brokenInstance.terminatedAt!);
    expect(row.goneAt! - row.launchedAt).toBeGreaterThanOrEqual(600_000);
    // ...and the ledger's paid total holds it with the replacement's time, nothing more.
    const started = brokenInstance.launchedAt;
    const replacement = w.group.asg.live()[0]!;
    const paid = boa.repo.ledger.ledgerTotals(started, w.clock.now()).paidGpuMs;
    expect(paid).toBe(4 * (row.goneAt! - row.launchedAt) + 4 * (w.clock.now() - replacement.launchedAt));
    const timedOut = w.metrics.flat().filter((m) => m.name === 'NodesProvisionTimedOut');
    expect(timedOut.at(-1)?.value).toBe(1);
  });

  it('gives a node that was Ready and turns NotReady provisionSeconds from then, not from its launch', async () => {
    const w = world({ provisionSeconds: 600 });
    const { tick, job } = await w.start();
    const j = job(4);
    await tick(3);
    expect(j.allocation).toHaveLength(4);
    await tick(12); // the node has been Ready longer than provisionSeconds
    const node = w.group.asg.live()[0]!.id;
    w.group.kube.neverReadies(node); // e.g. the kubelet misses its heartbeats for a while
    await tick(2);
    expect(w.group.terminations).toEqual([]);
    await tick(9); // not ready for 600 s: boa no longer waits for it
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([node]);
  });

  it('keeps the jobs of a node NotReady for less than notReadyGraceSeconds, and places nothing new there', async () => {
    // Jobs at their widths: the idle fill would widen the first onto its node's other GPUs.
    const w = world({ notReadyGraceSeconds: 300, idleFill: false });
    const { tick, job } = await w.start();
    const a = job(2);
    await tick(3);
    const node = w.group.asg.live()[0]!.id;
    expect(a.allocation).toEqual(Array(2).fill(nodeName(w.group, node)));
    const generation = a.generation;
    w.group.kube.neverReadies(node); // the kubelet misses its heartbeats
    const b = job(2);
    await tick(3); // 180 s NotReady
    expect(a.allocation).toEqual(Array(2).fill(nodeName(w.group, node)));
    expect(a.generation).toBe(generation);
    expect(b.allocation).not.toContain(nodeName(w.group, node));
    w.group.kube.readiesAgain(node);
    await tick(6);
    expect(a.generation).toBe(generation);
    // b got a node of its own meanwhile; the recovered node is not the one that goes.
    expect(w.group.terminations.map((t) => t.instanceId)).not.toContain(node);
  });

  it('a job re-placed during the grace (its width changed) does not go back onto the node, nor a new one', async () => {
    const w = world({ notReadyGraceSeconds: 300 });
    const { tick, job } = await w.start();
    const a = job(4);
    await tick(3);
    const name = nodeName(w.group, w.group.asg.live()[0]!.id);
    w.group.kube.neverReadies(w.group.asg.live()[0]!.id);
    await tick(1);
    expect(a.allocation).toEqual(Array(4).fill(name));
    a.widths = Array.from({ length: 8 }, () => 2);
    const b = job(2);
    await tick(3);
    expect(a.allocation).not.toContain(name);
    expect(b.allocation).not.toContain(name);
  });

  it('a restart of boa while a node is NotReady keeps its jobs there and the node (the grace starts at the restart)', async () => {
    const w = world({ onDisk: true, notReadyGraceSeconds: 300 });
    const first = await w.start();
    const a = first.job(4);
    await first.tick(20);
    const node = w.group.asg.live()[0]!.id;
    w.group.kube.neverReadies(node);
    await first.tick(1);
    const generation = first.boa.service.job(a.id).generation;
    await first.boa.close();
    const second = await w.start();
    await second.tick(2);
    expect(w.group.terminations).toEqual([]);
    expect(second.boa.service.job(a.id).generation).toBe(generation);
    await second.tick(5); // the grace is over: the job moves
    expect(second.boa.service.job(a.id).generation).toBeGreaterThan(generation);
  });

  it('keeps the jobs of a node EKS tainted for an update until it is drained, and places nothing new there', async () => {
    // Jobs at their widths: the idle fill would widen the first onto its node's other GPUs.
    const w = world({ idleFill: false });
    const { tick, job } = await w.start();
    const a = job(2);
    await tick(3);
    const node = w.group.asg.live()[0]!.id;
    const generation = a.generation;
    w.group.kube.taintForUpdate(node);
    const b = job(2);
    await tick(4); // b waits for a node of its own
    expect(a.generation).toBe(generation);
    expect(a.allocation).toEqual(Array(2).fill(nodeName(w.group, node)));
    expect(b.allocation).toHaveLength(2);
    expect(b.allocation).not.toContain(nodeName(w.group, node));
  });

  it('moves the jobs of a node NotReady for notReadyGraceSeconds, and at once with a grace of 0', async () => {
    for (const grace of [300, 0]) {
      const w = world({ notReadyGraceSeconds: grace });
      const { tick, job } = await w.start();
      const a = job(4);
      await tick(3);
      const node = w.group.asg.live()[0]!.id;
      const generation = a.generation;
      w.group.kube.neverReadies(node);
      await tick(1);
      expect(a.generation > generation).toBe(grace === 0);
      await tick(5); // 300 s NotReady
      expect(a.generation).toBeGreaterThan(generation);
      expect(a.allocation).not.toContain(nodeName(w.group, node));
    }
  });

  it('holds off the group while EKS applies a version update: its surge node is not scaled in, nothing is resized; then carries on', async () => {
    const w = world();
    const { tick, job, status } = await w.start();
    const a = job(4);
    await tick(3);
    const old = w.group.asg.live()[0]!.id;
    const resizes = w.group.updateCalls().length;
    w.group.startVersionUpdate(1); // EKS surges one node from the new launch template
    await tick(4);
    expect(w.group.terminations).toEqual([]);
    expect(w.group.updateCalls()).toHaveLength(resizes);
    expect(w.group.asg.live()).toHaveLength(2);
    expect((await status()).nodeGroup.status).toBe('UPDATING');
    expect(w.logs.lines.filter((l) => l.event === 'nodes.update-hold')).toHaveLength(1);
    w.group.finishVersionUpdate(); // the old node is drained and terminated, the surge given back
    await tick(3);
    expect(a.allocation).toHaveLength(4);
    expect(a.allocation).not.toContain(nodeName(w.group, old));
    expect(w.group.asg.live()).toHaveLength(1);
    expect(w.logs.lines.some((l) => l.event === 'nodes.drift')).toBe(false);
  });

  it('does not bill a node while EC2 has it pending', async () => {
    const w = world();
    const { tick, job, boa } = await w.start();
    job(4);
    await tick(1); // launched at this tick; pending for 60 s
    expect(boa.repo.ledger.ledgerTotals(0, w.clock.now()).paidGpuMs).toBe(0);
    await tick(1);
    expect(boa.repo.ledger.ledgerTotals(0, w.clock.now()).paidGpuMs).toBeGreaterThan(0);
  });
});

describe('level-triggered size', () => {
  it('corrects a desired size raised outside boa within one tick, removing the extra nodes boa does not need', async () => {
    const w = world();
    const { tick, job } = await w.start();
    const j = job(4);
    await tick(3);
    expect(j.allocation).toHaveLength(4);
    w.group.setDesiredOutside(3);
    expect(w.group.asg.live()).toHaveLength(3);
    await tick(1);
    expect(w.group.group.desiredSize).toBe(1);
    expect(w.group.asg.live()).toHaveLength(1);
    expect(w.group.terminations).toHaveLength(2);
    expect(w.logs.lines.find((l) => l.event === 'nodes.drift')).toMatchObject({ boa: 1, aws: 3 });
    expect(j.allocation).toHaveLength(4);
  });

  it('corrects a desired size lowered outside boa within one tick', async () => {
    const w = world();
    const { tick, job, status } = await w.start();
    job(4);
    job(4);
    await tick(3);
    w.group.setDesiredOutside(1);
    await tick(1);
    expect(w.group.group.desiredSize).toBe(2);
    expect(w.logs.lines.find((l) => l.event === 'nodes.drift')).toMatchObject({ boa: 2, aws: 1 });
    expect((await status()).nodeGroup.desiredNodes).toBe(2);
  });

  it("shows in /v1/status the desired size AWS reports, not boa's last request, when a correction fails", async () => {
    const w = world();
    const { tick, job, status, boa } = await w.start();
    job(4);
    job(4);
    await tick(3);
    expect((await status()).nodeGroup.desiredNodes).toBe(2);
    w.group.failNextUpdates(); // EKS accepts the update, then reports it Failed
    w.group.setDesiredOutside(1);
    await tick(1);
    expect(w.logs.events()).toContain('resize_failed');
    expect(boa.repo.lastResize()).toMatchObject({ requested: 2, status: 'failed' });
    expect(w.group.group.desiredSize).toBe(1);
    expect((await status()).nodeGroup.desiredNodes).toBe(1);
  });

  it('follows a replaced node group (new name and ARN)', async () => {
    const w = world();
    const { tick, job, status } = await w.start();
    const j = job(4);
    await tick(3);
    const old = w.group.asg.live()[0]!.id;
    w.group.replace('gpu-v2');
    await tick(3); // the old instance shuts down; the new group's boots and joins
    expect((await status()).nodeGroup.name).toBe('gpu-v2');
    const fresh = w.group.asg.live().map((i) => i.id);
    expect(fresh).toHaveLength(1);
    expect(fresh).not.toContain(old);
    expect(j.allocation).toEqual(Array.from({ length: 4 }, () => nodeName(w.group, fresh[0]!)));
    // A later scale-up goes to the new group.
    job(4);
    await tick(1);
    const last = w.group.eksMock.commandCalls(UpdateNodegroupConfigCommand).at(-1)?.args[0].input;
    expect(last).toMatchObject({ nodegroupName: 'gpu-v2', scalingConfig: { desiredSize: 2 } });
    expect(w.logs.events()).toContain('nodegroup.replaced');
  });
});

describe('lowering the desired size', () => {
  it('protects busy nodes first: a launch landing just before boa lowers the size takes the new node, not the busy one the ASG would pick', async () => {
    const w = world();
    let race: { busyId: string; asgWouldPick: string | undefined } | undefined;
    // The capacity comes back between boa's read and its resize, so the group has an instance more
    // than boa saw when the lower desired size arrives, and the ASG's own policy picks which goes.
    const { tick, job, boa } = await w.start((pool) =>
      Object.assign(Object.create(pool), {
        setDesiredSize: async (size: number) => {
          if (size < w.group.group.desiredSize && !race) {
            w.group.setCapacity(Number.POSITIVE_INFINITY);
            w.group.asg.step();
            const live = w.group.asg.live();
            const unprotected = live.map((i) => ({ ...i, protectedFromScaleIn: false }));
            race = {
              busyId: live.find((i) => nodeName(w.group, i.id) === a.allocation[0])!.id,
              asgWouldPick: w.group.asg.defaultPolicyVictim(unprotected)?.id,
            };
          }
          return pool.setDesiredSize(size);
        },
      }),
    );
    const a = job(4);
    await tick(3); // a runs on the one node
    expect(a.allocation).toHaveLength(4);
    const generation = a.generation;
    w.group.setCapacity(1);
    const b = job(4);
    await tick(1); // asks for 2; the launch fails for capacity
    await tick(1); // sees the failure and asks only for the node that exists; the launch lands meanwhile
    expect(race).toBeDefined();
    // Without the protection the ASG's default policy would have removed the busy node.
    expect(race!.asgWouldPick).toBe(race!.busyId);
    expect(w.group.asg.live().map((i) => i.id)).toEqual([race!.busyId]);
    const protections = w.group.asgMock
      .commandCalls(SetInstanceProtectionCommand)
      .map((c) => c.args[0].input);
    expect(protections).toEqual([
      expect.objectContaining({ InstanceIds: [race!.busyId], ProtectedFromScaleIn: true }),
    ]);
    expect(w.group.asg.instances.find((i) => i.id !== race!.busyId)?.terminatedBy).toBe('scale-in');
    expect(boa.service.job(a.id).generation).toBe(generation);
    expect(b.allocation).toEqual([]);
  });
});

/** `boa status` run as the real CLI against the service on a local port. */
async function cliStatus(boa: {
  app: { fetch: (r: Request) => Response | Promise<Response> };
  token: string;
}) {
  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const s = serve({ fetch: boa.app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  const cwd = mkdtempSync(join(tmpdir(), 'boa-nodes-cli-'));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return await runBoa(['status'], { BOA_URL: url, BOA_TOKEN: boa.token }, cwd);
  } finally {
    await new Promise((closed) => server.close(closed));
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe('capacity', () => {
  it('backs off on InsufficientInstanceCapacity, shows why jobs wait, pays only for launched nodes, recovers', async () => {
    const w = world();
    const { tick, job, status, boa } = await w.start();
    w.group.setCapacity(1);
    const a = job(4);
    const b = job(4);
    await tick(1); // asks for 2; one launches, one fails
    await tick(1); // sees the failure: asks only for what exists
    expect(w.group.group.desiredSize).toBe(1);
    const s = (await status()).nodeGroup;
    expect(s.capacity.backoffUntil).not.toBeNull();
    expect(s.waitingReason).toMatch(/InsufficientInstanceCapacity/);
    expect(s.issues[0]).toMatchObject({ code: 'AsgInstanceLaunchFailures' });
    // ...and `boa status` (the real CLI, over HTTP) says the same.
    const cli = await cliStatus(boa);
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/^jobs wait\s+.*InsufficientInstanceCapacity/m);
    expect(cli.stdout).toMatch(/^group health\s+AsgInstanceLaunchFailures: /m);
    await tick(1);
    expect(a.allocation).toHaveLength(4);
    expect(b.allocation).toEqual([]);
    expect(
      w.metrics
        .flat()
        .filter((m) => m.name === 'CapacityBackoff')
        .at(-1)?.value,
    ).toBe(1);
    // No overspend: only the launched node is paid, and no second node appears later.
    const paidNow = (await status()).gpus.paid;
    expect(paidNow).toBe(4);

    await tick(3); // backoff (120 s) over: asks again, fails again, waits twice as long
    expect(w.group.asg.live()).toHaveLength(1);
    expect((await status()).nodeGroup.capacity.failures).toBe(2);

    w.group.setCapacity(Number.POSITIVE_INFINITY);
    await tick(8);
    expect(w.group.asg.live()).toHaveLength(2);
    expect(b.allocation).toHaveLength(4);
    expect((await status()).nodeGroup.capacity).toMatchObject({ backoffUntil: null, failures: 0 });
  });
});

describe('draining', () => {
  it("removes a node only after its job's replicas stopped with their grace period", async () => {
    const w = world();
    const ex = gracefulExecutor();
    const { tick, job, boa, cordons } = await w.start(undefined, ex.executor);
    const a = job(4, { command: ['train'] });
    const b = job(4, { command: ['train'] });
    await tick(3);
    expect(a.allocation).toHaveLength(4);
    expect(b.allocation).toHaveLength(4);
    const bNode = w.group.asg.live().find((i) => nodeName(w.group, i.id) === b.allocation[0])!;
    boa.service.finishJob(b.id, 'cancelled');
    await tick(3); // b's replica is still stopping on its node
    expect(w.group.terminations).toEqual([]);
    expect(cordons()).toEqual([nodeName(w.group, bNode.id)]);
    ex.releaseAll();
    await tick(2);
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([bNode.id]);
  });

  it('terminates the emptied node as soon as its last replica is gone, between ticks', async () => {
    const w = world();
    const ex = gracefulExecutor();
    const { tick, job, boa } = await w.start(undefined, ex.executor);
    const a = job(4, { command: ['train'] });
    const b = job(4, { command: ['train'] });
    await tick(3);
    const bNode = w.group.asg.live().find((i) => nodeName(w.group, i.id) === b.allocation[0])!;
    boa.service.finishJob(b.id, 'cancelled');
    await tick(3);
    await boa.service.execution.settle();
    expect(w.group.terminations).toEqual([]);
    ex.releaseAll();
    // The executor's own follow-up (no tick): it sees the replica gone, and the node goes with it.
    boa.service.execution.reconcile();
    await boa.service.execution.settle();
    await boa.scheduler.settle();
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([bNode.id]);
    expect(w.group.group.desiredSize).toBe(1);
    expect(a.allocation).toHaveLength(4);
  });
});

describe('cordon refused', () => {
  it('removes an idle node even when the cordon is refused with 403 (RBAC without patch), and logs it', async () => {
    const w = world();
    const { tick, job, boa, kube } = await w.start();
    // Refused by the API server itself, through the real client and the retry layer.
    kube.faults.inject({ status: 403, reason: 'Forbidden', count: 100, match: (r) => r.method === 'PATCH' });
    const a = job(4);
    const b = job(4);
    await tick(3);
    const idle = w.group.asg.live().find((i) => nodeName(w.group, i.id) === b.allocation[0])!;
    boa.service.finishJob(b.id, 'done');
    await tick(1);
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([idle.id]);
    expect(w.logs.events()).toContain('node.cordon-failed');
    expect(a.allocation).toHaveLength(4);
  });
});
