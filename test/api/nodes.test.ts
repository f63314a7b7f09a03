/**
 * GET /v1/nodes: each node of boa's last listing, in the words GET /v1/status counts it by, with the
 * jobs holding its GPUs. On an emulated EKS node group through the real Kubernetes client, as
 * dashboard/removing-nodes.test.ts: a scale-in leaves a node removing, a cancelled job's replica still
 * stopping on it.
 */
import { afterEach, expect, it } from 'vitest';
import { nodeName, type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';
import { gracefulExecutor } from '../service/nodes/graceful-executor.ts';
import { NodesView } from '../../src/api/responses-nodes.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('lists each node: state, GPUs each job holds, the removal and the replica still stopping', async () => {
  const w = nodesWorld();
  worlds.push(w);
  const ex = gracefulExecutor();
  const { tick, job, boa, status } = await w.start(undefined, ex.executor);
  const get = async (query = '') => {
    const res = await boa.app.request(`/v1/nodes${query}`, {
      headers: { authorization: `Bearer ${boa.token}` },
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  // Before the pool answers a listing, the list is not known: null, not "no nodes".
  expect((await get()).body).toEqual({ nodes: null, lastTickAt: null });
  expect((await boa.app.request('/v1/nodes')).status).toBe(401);
  const refused = await get('?state=ready');
  expect(refused.status).toBe(400);
  expect(refused.body.error.message).toContain('"state"');

  const a = job(4, { command: ['train'] });
  const b = job(4, { command: ['train'] });
  await tick(3);
  const instances = w.group.asg.live();
  expect(instances).toHaveLength(2);
  const byName = new Map(instances.map((i) => [nodeName(w.group, i.id), i]));
  const aNode = a.allocation[0]!;
  const bNode = b.allocation[0]!;
  expect(aNode).not.toBe(bNode);
  const running = (await get()).body;
  expect(running.lastTickAt).not.toBeNull();
  const row = (name: string, body = running) => body.nodes.find((n: any) => n.name === name);
  for (const [name, holder] of [
    [aNode, a],
    [bNode, b],
  ] as const) {
    const instance = byName.get(name)!;
    expect(row(name)).toEqual({
      id: instance.id,
      name,
      state: 'ready',
      removing: null,
      replacedGroup: null,
      gpus: 4,
      foreignGpus: 0,
      jobs: [{ id: holder.id, name: 'job-4', gpus: 4 }],
      stopping: [],
      launchedAt: new Date(instance.launchedAt).toISOString(),
      // The ledger pays it from launch (its open row).
      paidSince: new Date(instance.launchedAt).toISOString(),
    });
  }

  // b cancelled: its node is chosen for scale-in and cordoned while b's replica still stops there.
  boa.service.finishJob(b.id, 'cancelled');
  await tick(1);
  const removing = (await get()).body;
  expect(removing.nodes).toHaveLength(2);
  // What the OpenAPI document declares (/openapi.json).
  expect(NodesView.safeParse(removing).error).toBeUndefined();
  expect(row(bNode, removing)).toMatchObject({
    state: 'removing',
    removing: { reason: 'scale-in', state: 'cordoned' },
    jobs: [],
    stopping: [{ jobId: b.id, replicas: 1, gpus: 4 }],
  });
  expect(row(aNode, removing)).toMatchObject({
    state: 'ready',
    removing: null,
    jobs: [{ id: a.id, gpus: 4 }],
  });
  // The same words and counts as GET /v1/status.
  const group = (await status()).nodeGroup;
  const states = removing.nodes.map((n: any) => n.state);
  expect(states.filter((s: string) => s === 'ready')).toHaveLength(group.readyNodes);
  expect(states.filter((s: string) => s === 'removing')).toHaveLength(group.removingNodes);
  expect(row(bNode, removing).removing.since).toBe(group.removing[0].since);

  // Its replica gone, boa terminates it; listed still (EKS's Terminating:Wait), it stays removing.
  ex.releaseAll();
  // The executor reports the replica ended at its next pass, a tick or two on.
  let after = (await get()).body;
  for (let i = 0; i < 3 && row(bNode, after)?.removing?.state !== 'terminated'; i++) {
    await tick(1);
    after = (await get()).body;
  }
  expect(row(bNode, after)).toMatchObject({
    state: 'removing',
    removing: { reason: 'scale-in', state: 'terminated' },
    stopping: [],
  });
  // Gone from the listing, gone from the list.
  await tick(3);
  expect((await get()).body.nodes.map((n: any) => n.name)).toEqual([aNode]);
});
