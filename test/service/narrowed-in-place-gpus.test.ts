/**
 * A running job narrowed on a node it keeps (4 -> 2 GPUs on one 4-GPU node) starts its new generation on
 * part of the node once its old replica, still holding all 4 through its grace, has ended. The 2 GPUs it
 * gives up are held like any stopping replica's: another job waits for them (waitingFor stopping, heldBy
 * the narrowed job), is not booked running meanwhile, and starts once the old replica has ended. Before,
 * the other job was placed there at once, shown running and booked as allocated while the executor held
 * its replicas back (the kubelet refused its pod: OutOfnvidia.com/gpu).
 */
import { afterEach, expect, it } from 'vitest';
import { graceService } from './grace-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('GPUs a job narrowed in place gives up are held from the job it makes room for until its old replica ends', async () => {
  const { s, executor, tick, submit, view, running } = await graceService(cleanups, { maxNodes: 1 });
  const a = await submit();
  await running([a]);
  await tick();
  // a alone runs on the whole node (its plan's 4, then the idle fill's 4 under the lower budget).
  expect(s.service.job(a).allocation).toHaveLength(4);
  const [node] = executor.nodesOf(a);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
  await s.service.planner.idle();
  // b comes: the plan's [2, 2] narrows a to 2 on its node in the tick that places b.
  const b = await submit();
  await tick();
  expect(s.service.job(a)).toMatchObject({ state: 'running', allocation: [node, node] });
  const narrowedAt = s.service.job(a).generationSince as number;
  const old = s.service.state.liveReplicas.find((r) => r.jobId === a && r.phase === 'stopping');
  expect(old).toMatchObject({ node, gpus: 4 });
  const waits = async () => {
    const seen = await view(b);
    expect(seen).toMatchObject({ state: 'waiting', waitingFor: 'stopping' });
    expect(s.service.job(b).allocation).toEqual([]);
    expect(executor.nodesOf(b)).toEqual([]);
    expect(s.service.state.allocatedGpus).toBe(2);
    return seen;
  };
  // In the tick that narrows a (the GPUs its move leaves: named from this tick on, not the next one's),
  // and the ticks after (a's stopping replica).
  expect((await waits()).heldBy).toMatchObject({ jobs: [a] });
  await tick();
  expect((await waits()).heldBy.jobs).toEqual([a]);
  // Only a's 2 were booked: b never was on the GPUs a's old replica holds.
  const samples = s.service.deps.repo.ledger.allocationSince(narrowedAt).filter((x) => x.from >= narrowedAt);
  expect(samples.length).toBeGreaterThan(0);
  for (const sample of samples) expect(sample.gpus).toBe(2);
  // The node shows them held by a's stopping replica: none free.
  const listed = (await s.request('GET', '/v1/nodes')).body.nodes.find((n: { id: string }) => n.id === node);
  expect(listed.stopping).toEqual([{ jobId: a, replicas: 1, gpus: 2 }]);

  executor.end(a);
  s.service.execution.reconcile();
  await s.service.execution.settle();
  await tick();
  expect(await view(b)).toMatchObject({ state: 'running', width: 2, restarts: 0 });
  expect(s.service.job(b).allocation).toEqual([node, node]);
  expect(executor.nodesOf(b)).toEqual([node]);
  // a stayed where it runs, not moved by its own old replica.
  expect(s.service.job(a)).toMatchObject({ state: 'running', allocation: [node, node], restarts: 0 });
  expect(s.service.state.allocatedGpus).toBe(4);
});

it('GPUs the idle fill lent give way to a job that comes, which waits for the lent replica to end', async () => {
  const { s, executor, tick, submit, view } = await graceService(cleanups, {
    maxNodes: 1,
    priorRates: { deepspeech2: 2 },
  });
  // The plan runs deepspeech2 on 1 GPU; the fill lends a the node's other 3.
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  const a = await submit('deepspeech2');
  for (let i = 0; i < 4; i++) await tick();
  expect(s.service.job(a)).toMatchObject({ state: 'running', idleFillGpus: 3 });
  const [node] = executor.nodesOf(a);
  const b = await submit('deepspeech2');
  // a gives them back (narrowed to 1 on its node) and b waits for its old replica, every tick: kept lent
  // because b could not start at once, they starved b for as long as a ran.
  for (let i = 0; i < 3; i++) {
    await tick();
    expect(s.service.job(a)).toMatchObject({ allocation: [node], idleFillGpus: 0 });
    expect(await view(b)).toMatchObject({ state: 'waiting', waitingFor: 'stopping', heldBy: { jobs: [a] } });
    expect(executor.nodesOf(b)).toEqual([]);
  }
  executor.end(a);
  s.service.execution.reconcile();
  await s.service.execution.settle();
  await tick();
  expect(await view(b)).toMatchObject({ state: 'running', restarts: 0 });
  expect(executor.nodesOf(b)).toEqual([node]);
});
