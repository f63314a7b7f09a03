/**
 * The embedded pool's node a running job was placed on is not listed again after a restart of boa (its
 * replicas, local processes, still run). The restarted boa adopts them, then moves the job to the nodes
 * listed as one new generation, counted as no restart, the old generation's processes stopped, and the
 * node's GPU-hours end in the ledger at the tick that saw it gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { nodesOf } from '../../src/service/jobs.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { tickUntil } from '../helpers/tick-until.ts';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('a local node not listed after a restart: its job moves once, no restart counted, the node paid until seen gone', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-local-gone-'));
  cleanups.push(() => {
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
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
    workload: { command: ['node', '-e', 'setInterval(() => {}, 1000)'] },
  });
  expect(made.status).toBe(201);
  const id = made.body.id as number;
  const running = () => first.service.job(id).state === 'running';
  await tickUntil(first, running);
  const placed = structuredClone(first.service.job(id));
  const placedOn = nodesOf(placed.allocation).map((n) => n.node);
  expect(placedOn.length).toBeGreaterThan(1);
  await first.close();

  const second = await startService({ dataDir, clock, config });
  cleanups.push(second.close);
  const gone = placedOn[0]!;
  const listNodes = second.pool.listNodes.bind(second.pool);
  second.pool.listNodes = async () => (await listNodes()).filter((n) => n.id !== gone);
  const seenGoneAt = clock.now();
  await second.ticks(1);
  await second.service.execution.settle();
  const moved = structuredClone(second.service.job(id));
  expect(moved).toMatchObject({
    state: 'running',
    generation: placed.generation + 1,
    restarts: 0,
    restartNotBefore: null,
    failureReason: null,
  });
  expect(nodesOf(moved.allocation).map((n) => n.node)).not.toContain(gone);
  const row = second.db.$client.prepare('select gone_at as goneAt from ledger_nodes where id = ?');
  expect(row.get(gone)).toEqual({ goneAt: seenGoneAt });
  for (const node of placedOn.slice(1)) expect(row.get(node)).toEqual({ goneAt: null });
  // The old generation's process on the gone node stopped; the new one runs on the nodes listed.
  const movedTo = nodesOf(moved.allocation).map((n) => n.node);
  await tickUntil(second, () => {
    const held = second.service.execution.nodesWithReplicas;
    return !held.has(gone) && movedTo.every((node) => held.has(node));
  });
  expect(second.service.job(id)).toMatchObject({ generation: moved.generation, restarts: 0 });
}, 120_000);
