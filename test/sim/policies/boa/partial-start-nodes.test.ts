/**
 * A job started on fewer GPUs than the budget's ceiling gives it, because the nodes for the rest are
 * still booting, runs at that width from then on: the ceiling keeps a running job's width within 2x of
 * its target (core/spend-ceiling.ts), to spare a restart. The tick that started it asked for nodes for
 * the whole width; the next one, reading the width it left, scaled the booting nodes in (a paid boot
 * thrown away). The service's test of the same: test/service/partial-start-nodes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterView, JobView, NodeView } from '../../../../src/sim/policy.ts';
import { boaPolicy } from '../../../../src/sim/policies/boa/index.ts';
import type { BoaPolicy } from '../../../../src/sim/policies/boa/policy.ts';
import { boaContext } from './context.ts';

const context = boaContext({ cifar10: 8, bert: 1 });

const job = (id: number, app: string, arrival: number, allocation: readonly number[] = []): JobView => ({
  id,
  name: `${app}-${id}`,
  app,
  arrival,
  requestedGpus: 1,
  requestedBatch: 128,
  progressFraction: 0,
  statEpoch: 0,
  allocation,
  rescales: 0,
  restartingUntil: null,
  attainedGpuSeconds: 0,
  runSeconds: 0,
});

/** `ready` nodes booted at 0, then `booting` nodes requested at `now` (the engine's 90 s boot). */
const cluster = (now: number, ready: number, booting = 0): ClusterView => {
  const nodes: NodeView[] = [];
  for (let id = 0; id < ready; id++) nodes.push({ id, gpus: 4, ready: true, readyAt: 0 });
  for (let id = ready; id < ready + booting; id++)
    nodes.push({ id, gpus: 4, ready: false, readyAt: now + 90 });
  return { now, gpusPerNode: 4, mode: 'autoscaled', maxNodes: 100, nodes };
};

describe('boa: a job started on part of its width while nodes boot', () => {
  it('asks for the nodes the next tick keeps: no booting node scaled in', () => {
    const policy = boaPolicy.create(context, { budget: 40 }) as BoaPolicy;
    let jobs = [job(1, 'cifar10', 0), job(2, 'cifar10', 0)];
    for (const j of jobs) policy.onArrival?.(j, 0);
    const first = policy.decide(cluster(0, 8), jobs);
    expect(jobs.map((j) => first.allocations.get(j.id)?.length)).toEqual([16, 16]);
    expect(first.desiredNodes).toBe(8);
    jobs = jobs.map((j) => job(j.id, j.app, j.arrival, first.allocations.get(j.id)));

    // A bert and a cifar10 job arrive; the ceiling narrows the jobs, and the bert job starts on the 24
    // GPUs the 8 ready nodes have left, short of its width: nodes are asked for.
    const arrivals = [job(3, 'bert', 60), job(4, 'cifar10', 60)];
    for (const j of arrivals) policy.onArrival?.(j, 60);
    jobs = [...jobs, ...arrivals];
    const started = policy.decide(cluster(60, 8), jobs);
    expect(started.allocations.get(3)).toHaveLength(24);
    const asked = started.desiredNodes as number;
    expect(asked).toBeGreaterThan(8);
    jobs = jobs.map((j) => job(j.id, j.app, j.arrival, started.allocations.get(j.id) ?? []));

    // The next tick, the nodes asked for booting: the bert job keeps its 24 GPUs (within 2x of its
    // target), and the tick asks for the same nodes. Before, the first tick asked for 11 (the bert job's
    // whole width) and this one for 9, scaling in two booting nodes.
    const next = policy.decide(cluster(120, 8, asked - 8), jobs);
    expect(next.allocations.get(3)).toHaveLength(24);
    expect(next.desiredNodes).toBe(asked);
  });
});
