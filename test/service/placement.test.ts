import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import type { PoolNode } from '../../src/service/ports.ts';
import { BOUNDS, type Job, node, widthOf } from './placement-fixture.ts';

/** Applies a tick's changes to the jobs, as the scheduler does. */
function tick(placement: IncrementalPlacement, jobs: Job[], nodes: PoolNode[]) {
  const before = new Map(jobs.map((j) => [j.id, j.allocation]));
  const result = placement.place(jobs, widthOf, nodes, BOUNDS);
  for (const job of jobs) {
    const next = result.changed.get(job.id);
    if (next !== undefined) job.allocation = [...next];
  }
  return { result, before };
}

describe('IncrementalPlacement', () => {
  it('packs new jobs best fit, then leaves settled jobs alone', () => {
    const placement = new IncrementalPlacement();
    const jobs: Job[] = [
      { id: 1, width: 4, allocation: [] },
      { id: 2, width: 2, allocation: [] },
      { id: 3, width: 2, allocation: [] },
    ];
    const nodes = [node(0), node(1)];
    const first = tick(placement, jobs, nodes).result;
    expect(first.changed.size).toBe(3);
    expect(jobs.map((j) => j.allocation)).toEqual([
      ['i-0', 'i-0', 'i-0', 'i-0'],
      ['i-1', 'i-1'],
      ['i-1', 'i-1'],
    ]);
    expect(first).toMatchObject({ wantedGpus: 8, allocatedGpus: 8, desiredNodes: 2 });
    // Job 2 shrinks to 1 GPU: only it changes, and it stays on its node.
    (jobs[1] as Job).width = 1;
    const second = tick(placement, jobs, nodes).result;
    expect([...second.changed.keys()]).toEqual([2]);
    expect(jobs[1]?.allocation).toEqual(['i-1']);
    expect(second.allocatedGpus).toBe(7);
  });

  it('re-places the jobs of a node that went away and frees the GPUs of jobs that left', () => {
    const placement = new IncrementalPlacement();
    const jobs: Job[] = [
      { id: 1, width: 4, allocation: [] },
      { id: 2, width: 4, allocation: [] },
    ];
    tick(placement, jobs, [node(0), node(1), node(2)]);
    const onNode0 = jobs.find((j) => j.allocation[0] === 'i-0') as Job;
    const other = jobs.find((j) => j !== onNode0) as Job;
    const kept = other.allocation;
    const { result } = tick(placement, jobs, [node(1), node(2)]);
    expect([...result.changed.keys()]).toEqual([onNode0.id]);
    const freeNode = kept[0] === 'i-1' ? 'i-2' : 'i-1';
    expect(onNode0.allocation).toEqual([freeNode, freeNode, freeNode, freeNode]);
    expect(other.allocation).toBe(kept);
    // The other job finishes: its GPUs are free for a newcomer at once.
    const rest = [onNode0, { id: 3, width: 4, allocation: [] as string[] }];
    tick(placement, rest, [node(1), node(2)]);
    expect(rest[1]?.allocation).toEqual(kept);
  });

  it('takes an allocation reset elsewhere (a job stopped) as the truth', () => {
    const placement = new IncrementalPlacement();
    const jobs: Job[] = [{ id: 1, width: 2, allocation: [] }];
    tick(placement, jobs, [node(0)]);
    (jobs[0] as Job).allocation = [];
    const { result } = tick(placement, jobs, [node(0)]);
    expect(result.changed.get(1)).toEqual(['i-0', 'i-0']);
    expect(result.allocatedGpus).toBe(2);
  });

  it('over random ticks: no node over capacity, only ready nodes, settled jobs kept, widths met when they fit', () => {
    const step = fc.record({
      widths: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 12 }),
      leave: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      nodes: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 8, maxLength: 8 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const placement = new IncrementalPlacement();
        let jobs: Job[] = [];
        let nextId = 1;
        for (const s of steps) {
          // Jobs leave, the rest may change width, newcomers arrive (ids ascending).
          jobs = jobs.filter((_, i) => !s.leave[i]);
          jobs.forEach((j, i) => {
            if (s.widths[i] !== undefined && i % 2 === 0) j.width = s.widths[i] as number;
          });
          for (const w of s.widths.slice(jobs.length)) jobs.push({ id: nextId++, width: w, allocation: [] });
          // Node state: 0 gone, 1 booting, 2 ready.
          const listed = s.nodes.flatMap((state, i) => (state === 0 ? [] : [node(i, state === 2)]));
          const ready = listed.filter((n) => n.ready);
          const readyIds = new Set(ready.map((n) => n.id));
          const widthsBefore = new Map(jobs.map((j) => [j.id, j.width]));
          const { result, before } = tick(placement, jobs, ready);
          const used = new Map<string, number>();
          let allocated = 0;
          for (const job of jobs) {
            allocated += job.allocation.length;
            for (const id of job.allocation) used.set(id, (used.get(id) ?? 0) + 1);
            expect(job.allocation.length).toBeLessThanOrEqual(job.width);
            const prior = before.get(job.id) ?? [];
            const stillFine =
              prior.length === widthsBefore.get(job.id) && prior.every((id) => readyIds.has(id));
            if (stillFine && prior.length > 0) expect(result.changed.has(job.id)).toBe(false);
          }
          for (const [id, gpus] of used) {
            expect(readyIds.has(id)).toBe(true);
            expect(gpus).toBeLessThanOrEqual(4);
          }
          // What the node reconciler reads per node: the same counts as the jobs' allocations.
          for (let i = 0; i < 8; i++) expect(placement.gpusOn(`i-${i}`)).toBe(used.get(`i-${i}`) ?? 0);
          expect(result.allocatedGpus).toBe(allocated);
          const wanted = jobs.reduce((sum, j) => sum + j.width, 0);
          expect(result.wantedGpus).toBe(wanted);
          if (wanted <= 4 * ready.length)
            for (const job of jobs) expect(job.allocation).toHaveLength(job.width);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('over a long life of node churn forgets the nodes it numbered, keeping every settled job where it runs', () => {
    // Each EKS launch is a new instance id. Past 8 names here the placement starts its numbering afresh,
    // as after a restart: settled jobs must stay put, and every rule hold, as without forgetting.
    const step = fc.record({
      widths: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 10 }),
      leave: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
      replace: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
      ready: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    });
    let forgot = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const placement = new IncrementalPlacement(8);
        let jobs: Job[] = [];
        let nextId = 1;
        let nextNode = 6;
        const slots = [0, 1, 2, 3, 4, 5];
        for (const s of steps) {
          jobs = jobs.filter((_, i) => !s.leave[i]);
          jobs.forEach((j, i) => {
            if (s.widths[i] !== undefined && i % 2 === 0) j.width = s.widths[i] as number;
          });
          for (const w of s.widths.slice(jobs.length)) jobs.push({ id: nextId++, width: w, allocation: [] });
          s.replace.forEach((replace, i) => {
            if (replace) slots[i] = nextNode++;
          });
          const ready = slots.flatMap((n, i) => (s.ready[i] ? [node(n)] : []));
          const readyIds = new Set(ready.map((n) => n.id));
          const numberedBefore = placement.numberedNodes;
          const { result, before } = tick(placement, jobs, ready);
          if (placement.numberedNodes < numberedBefore) forgot += 1;
          const used = new Map<string, number>();
          for (const job of jobs) {
            for (const id of job.allocation) used.set(id, (used.get(id) ?? 0) + 1);
            const prior = before.get(job.id) ?? [];
            const settled = prior.length === job.width && prior.every((id) => readyIds.has(id));
            if (settled && prior.length > 0) expect(result.changed.has(job.id)).toBe(false);
          }
          for (const [id, gpus] of used) {
            expect(readyIds.has(id)).toBe(true);
            expect(gpus).toBeLessThanOrEqual(4);
            expect(placement.gpusOn(id)).toBe(gpus);
          }
          // The jobs by node the idle fill asks for (jobsOn), after a fresh numbering too: a scan's.
          for (let n = 0; n < placement.numberedNodes; n++)
            expect(placement.jobsOn([n])).toEqual(
              jobs.filter((j) => placement.slotsOf(j.id)?.includes(n)).map((j) => j.id),
            );
          const wanted = jobs.reduce((sum, j) => sum + j.width, 0);
          if (wanted <= 4 * ready.length)
            for (const job of jobs) expect(job.allocation).toHaveLength(job.width);
          // Bounded: past the limit, at most this listing's names and the jobs' allocations' are added.
          expect(placement.numberedNodes).toBeLessThanOrEqual(8 + 6 + 10 * 9);
        }
      }),
      { numRuns: 300 },
    );
    expect(forgot).toBeGreaterThan(0);
  });
});
