/**
 * GET /v1/nodes and `boa nodes` right after a job is cancelled whose replicas the executor has been sent
 * but not yet listed (its answers fail): placement holds that node's GPUs (unreported-stop-gpus.test.ts),
 * so the node lists them as the job's stopping replica, not free. Before, the view counted only the
 * replicas an answer listed, and `boa nodes` showed free GPUs no job could be given.
 */
import { afterEach, expect, it } from 'vitest';
import { renderNodes } from '../../src/cli/commands/nodes.ts';
import { NodesView } from '../../src/api/responses-nodes.ts';
import { graceService } from '../service/grace-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** The `free` column of `boa nodes` for `node`, as the CLI renders the API's body. */
function freeColumn(body: any, node: string): number {
  const lines = renderNodes(body).trim().split('\n');
  const header = lines[0]!.split(/\s+/);
  const row = lines.find((l) => l.split(/\s+/)[0] === node);
  if (row === undefined) throw new Error(`no row for ${node} in:\n${lines.join('\n')}`);
  return Number(row.split(/\s+/)[header.indexOf('free')]);
}

it("a cancelled job's replicas no answer has listed hold their node's GPUs there, as placement holds them", async () => {
  const { s, executor, tick, submit, view } = await graceService(cleanups, { maxNodes: 1 });
  const nodes = async () => {
    const res = await s.request('GET', '/v1/nodes');
    expect(res.status).toBe(200);
    expect(NodesView.safeParse(res.body).error).toBeUndefined();
    return res.body;
  };
  const a = await submit();
  // The executor starts a's replica, but no answer of it comes through.
  executor.failing = true;
  for (let i = 0; i < 6 && executor.nodesOf(a).length === 0; i++) await tick();
  expect(executor.nodesOf(a)).toHaveLength(1);
  expect(s.service.state.liveReplicas.some((r) => r.jobId === a)).toBe(false);
  const [node] = s.service.job(a).allocation;
  const held = s.service.job(a).allocation.length;
  const running = await nodes();
  const gpus = running.nodes.find((n: any) => n.name === node || n.id === node).gpus as number;
  expect(freeColumn(running, node!)).toBe(gpus - held);

  expect((await s.request('POST', `/v1/jobs/${a}/cancel`)).status).toBe(200);
  const b = await submit();
  await tick();
  // Placement gives a's GPUs to no one: b waits for them.
  expect((await view(b)).waitingFor).toBe('stopping');
  const cancelled = await nodes();
  const row = cancelled.nodes.find((n: any) => (n.name ?? n.id) === node);
  expect(row.jobs).toEqual([]);
  expect(row.stopping).toEqual([{ jobId: a, replicas: 1, gpus: held }]);
  expect(freeColumn(cancelled, node!)).toBe(gpus - held);
  expect(renderNodes(cancelled)).toContain(`${a}:${held}(stopping)`);

  // Answers come again and a's replica ends: its GPUs are free in the view as placement gives them to b.
  executor.failing = false;
  executor.end(a);
  s.service.execution.reconcile();
  await s.service.execution.settle();
  await tick();
  expect((await view(b)).state).toBe('running');
  const after = (await nodes()).nodes.find((n: any) => (n.name ?? n.id) === node);
  expect(after.stopping).toEqual([]);
  expect(after.jobs.map((j: any) => j.id)).toEqual([b]);
});
