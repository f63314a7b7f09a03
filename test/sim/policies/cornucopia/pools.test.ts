import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignPools, gpuPools } from '../../../../src/sim/policies/cornucopia/pools.ts';
import { CornucopiaScheduler } from '../../../../src/sim/policies/cornucopia/scheduler.ts';
import type { Allocation, GpuType, JobView, NodeView } from '../../../../src/sim/policy.ts';
import { clusterView, nodes } from '../fakes.ts';
import { context, jobView } from './fakes.ts';

/** `t4` nodes 0.., then `v100` nodes after them, 4 GPUs each. */
function mixed(t4: number, v100: number): NodeView[] {
  return [...nodes(t4, { gpuType: 't4' }), ...nodes(v100, { gpuType: 'v100' }, t4)];
}

function typesOf(allocation: Allocation, nodeViews: readonly NodeView[]): Set<GpuType | undefined> {
  const type = new Map(nodeViews.map((n) => [n.id, n.gpuType]));
  return new Set(allocation.map((id) => type.get(id)));
}

describe('cornucopia on several GPU types (section 3.1 (iii))', () => {
  it('gives a job wider than one type only the GPUs of one type', () => {
    const cluster = mixed(1, 1);
    const decision = new CornucopiaScheduler(context()).decide(clusterView(cluster), [
      jobView(1, { kind: 'interactive', requestedGpus: 6 }),
    ]);
    const allocation = decision.allocations.get(1) ?? [];
    expect(allocation).toHaveLength(4);
    expect(typesOf(allocation, cluster).size).toBe(1);
  });

  it('grows and preempts within the type a job runs on', () => {
    // A batch job on the t4 node holds it whole; an interactive job asking 2 arrives. The v100 node is
    // free, so it starts there, and the batch job keeps its 4 t4 GPUs without spilling onto the v100s.
    const cluster = mixed(1, 1);
    const batch = jobView(1, {
      app: 'long',
      kind: 'batch',
      requestedGpus: 4,
      runSeconds: 600,
      allocation: [0, 0, 0, 0],
    });
    const decision = new CornucopiaScheduler(context()).decide(clusterView(cluster), [
      batch,
      jobView(2, { kind: 'interactive', requestedGpus: 2, arrival: 3600 }),
    ]);
    expect(decision.allocations.get(1)).toEqual([0, 0, 0, 0]);
    expect(decision.allocations.get(2)).toEqual([1, 1]);
  });

  it('puts a waiting job where free GPUs cover most of its request, then where it could take most', () => {
    const pools = gpuPools(mixed(2, 1));
    expect(pools.map((p) => [p.type, p.gpus])).toEqual([
      ['t4', 8],
      ['v100', 4],
    ]);
    const running = { queue: 2 as const, request: 4, allocation: [0, 0, 0, 0, 1, 1] };
    // 2 t4 GPUs and 4 v100 GPUs free: the first waiting job asks 3 of the v100s, leaving 1 there. The
    // next asks 1: both pools cover it, and the t4s have more left (2). The interactive job's 1 is
    // covered by the last t4 GPU, and it could take the batch job's 6 there too.
    expect(
      assignPools(
        [
          running,
          { queue: 2, request: 3, allocation: [] },
          { queue: 2, request: 1, allocation: [] },
          { queue: 1, request: 1, allocation: [] },
        ],
        pools,
      ),
    ).toEqual([0, 1, 0, 0]);
  });

  it('never spans types nor over-allocates a node, over rounds of random jobs', () => {
    const job = fc.record({
      app: fc.constantFrom('short', 'long', 'flat'),
      kind: fc.constantFrom<'interactive' | 'batch'>('interactive', 'batch'),
      requestedGpus: fc.integer({ min: 1, max: 12 }),
    });
    const rounds = fc.array(fc.record({ arrivals: fc.array(job, { maxLength: 4 }), finish: fc.nat(3) }), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        rounds,
        (t4, v100, plan) => {
          const cluster = mixed(t4, v100);
          const scheduler = new CornucopiaScheduler(context());
          let jobs: JobView[] = [];
          let nextId = 0;
          plan.forEach((round, t) => {
            for (const done of jobs.slice(0, round.finish)) scheduler.onCompletion(done);
            jobs = jobs.slice(round.finish);
            for (const fields of round.arrivals) jobs.push(jobView(nextId++, { ...fields, arrival: t * 60 }));
            const decision = scheduler.decide(clusterView(cluster, { now: t * 60 }), jobs);
            const used = new Map<number, number>();
            for (const allocation of decision.allocations.values()) {
              expect(typesOf(allocation, cluster).size).toBe(1);
              for (const id of allocation) used.set(id, (used.get(id) ?? 0) + 1);
            }
            for (const gpus of used.values()) expect(gpus).toBeLessThanOrEqual(4);
            jobs = jobs.map((j) => ({
              ...j,
              runSeconds: j.runSeconds + 60,
              allocation: decision.allocations.get(j.id) ?? [],
            }));
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
