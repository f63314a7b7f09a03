import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ExecJob, type ExecNode, executeWidths } from '../../../src/core/exec/execute.ts';

const nodes = (count: number, ready = count): ExecNode[] =>
  Array.from({ length: count }, (_, id) => ({ id, gpus: 4, ready: id < ready }));
const partial = { gpusPerNode: 4, maxNodes: 100, shortfall: 'partial' as const };
const gang = { ...partial, shortfall: 'gang' as const };

describe('executing widths', () => {
  it('keeps a job that has its width where it is, and places a new one beside it', () => {
    const jobs: ExecJob[] = [
      { id: 1, width: 2, current: [1, 1] },
      { id: 2, width: 2, current: [] },
    ];
    const out = executeWidths(jobs, nodes(2), partial);
    expect(out.allocations.get(1)).toEqual([1, 1]);
    // Best fit: the new job fills node 1 rather than opening node 0.
    expect(out.allocations.get(2)).toEqual([1, 1]);
    expect(out.desiredNodes).toBe(1);
  });

  it('asks for ceil(sum of widths / 4) nodes, clamped to the bounds', () => {
    const jobs: ExecJob[] = [5, 4, 2].map((width, id) => ({ id, width, current: [] }));
    expect(executeWidths(jobs, [], partial).desiredNodes).toBe(3);
    expect(executeWidths(jobs, [], { ...partial, maxNodes: 2 }).desiredNodes).toBe(2);
    expect(executeWidths([], [], { ...partial, minNodes: 1 }).desiredNodes).toBe(1);
  });

  it('counts a larger provision toward the node count without placing it', () => {
    const jobs: ExecJob[] = [{ id: 1, width: 4, current: [0, 0, 0, 0], provision: 16 }];
    const out = executeWidths(jobs, nodes(1), partial);
    expect(out.allocations.get(1)).toEqual([0, 0, 0, 0]);
    expect(out.desiredNodes).toBe(4);
  });

  it('runs the first job that does not fit on what is left, and the others wait (FIFO)', () => {
    const jobs: ExecJob[] = [
      { id: 1, width: 4, current: [] },
      { id: 2, width: 8, current: [] },
      { id: 3, width: 1, current: [] },
    ];
    // Two ready nodes, one booting: job 1 fits, job 2 runs short on node 1, job 3 waits.
    const out = executeWidths(jobs, nodes(3, 2), partial);
    expect(out.allocations.get(1)).toEqual([0, 0, 0, 0]);
    expect(out.allocations.get(2)).toEqual([1, 1, 1, 1]);
    expect(out.allocations.has(3)).toBe(false);
    expect(out.short).toEqual([2]);
    expect(out.waiting).toEqual([3]);
    expect(out.desiredNodes).toBe(4);
  });

  it('in gang mode lets no later job pass a job that does not fit', () => {
    const jobs: ExecJob[] = [
      { id: 1, width: 8, current: [] },
      { id: 2, width: 1, current: [] },
    ];
    const out = executeWidths(jobs, nodes(2, 1), gang);
    expect(out.allocations.size).toBe(0);
    expect(out.waiting).toEqual([1, 2]);
  });

  it('never stops a running job for another: a job that cannot grow keeps what it has', () => {
    const jobs: ExecJob[] = [
      { id: 1, width: 4, current: [] },
      { id: 2, width: 8, current: [0, 0, 0, 0] },
    ];
    const out = executeWidths(jobs, nodes(1), partial);
    expect(out.allocations.get(2)).toEqual([0, 0, 0, 0]);
    expect(out.short).toEqual([2]);
    expect(out.waiting).toEqual([1]);
  });

  it('re-places shrinking jobs before growing ones, so the growth uses the freed GPUs', () => {
    const jobs: ExecJob[] = [
      { id: 1, width: 6, current: [0, 0] },
      { id: 2, width: 2, current: [0, 0, 1, 1, 1, 1] },
    ];
    const out = executeWidths(jobs, nodes(2), partial);
    expect(out.allocations.get(2)).toHaveLength(2);
    expect(out.allocations.get(1)).toHaveLength(6);
    expect(out.short).toEqual([]);
  });

  it('places jobs resizing in one tick together, on as few nodes as they fit (found by a newcomer)', () => {
    // One at a time, the first to grow took the GPUs the second was about to free: each split over
    // both nodes ([0, 1, 1, 1] and [0, 0, 0, 1]) where one node each holds them.
    const jobs: ExecJob[] = [
      { id: 1, width: 4, current: [0, 0] },
      { id: 2, width: 4, current: [0, 0, 1] },
    ];
    const out = executeWidths(jobs, nodes(2), { ...partial, packResized: true });
    expect(out.allocations.get(1)).toEqual([0, 0, 0, 0]);
    expect(out.allocations.get(2)).toEqual([1, 1, 1, 1]);
    expect(out.short).toEqual([]);
    // The simulator's policies keep placing them one at a time, as the matrix was measured.
    const apart = executeWidths(jobs, nodes(2), partial);
    expect(apart.allocations.get(1)).toEqual([0, 1, 1, 1]);
  });

  it('packs the jobs that can resize together when one waits for a booting node', () => {
    // Job 3 grows past the ready GPUs (node 3 still boots): it keeps its two GPUs, short, and the other
    // two still get a node each. All or nothing, job 3 sent both back to one at a time and job 2 ran
    // split over nodes 0 and 1.
    const jobs: ExecJob[] = [
      { id: 1, width: 4, current: [0, 0] },
      { id: 2, width: 4, current: [0, 0, 1] },
      { id: 3, width: 9, current: [2, 2] },
    ];
    const out = executeWidths(jobs, nodes(4, 3), { ...partial, packResized: true });
    expect(new Set(out.allocations.get(1))).toHaveProperty('size', 1);
    expect(new Set(out.allocations.get(2))).toHaveProperty('size', 1);
    expect(out.allocations.get(1)).toHaveLength(4);
    expect(out.allocations.get(2)).toHaveLength(4);
    expect(out.allocations.get(3)).toEqual([2, 2]);
    expect(out.short).toEqual([3]);
  });

  it('moves a job off a node that is no longer ready', () => {
    const out = executeWidths([{ id: 1, width: 2, current: [0, 0] }], nodes(2).slice(1), partial);
    expect(out.allocations.get(1)).toEqual([1, 1]);
  });

  it('rejects bad widths and bounds with the job or bound named', () => {
    expect(() => executeWidths([{ id: 7, width: 0, current: [] }], [], partial)).toThrow(/job 7: width/);
    expect(() => executeWidths([], [], { ...partial, minNodes: 3, maxNodes: 2 })).toThrow(/node bounds/);
    expect(() => executeWidths([], [], { ...partial, gpusPerNode: 0 })).toThrow(/gpusPerNode/);
  });
});

describe('executor invariants on random clusters', () => {
  const scenario = fc
    .record({
      nodeCount: fc.integer({ min: 0, max: 6 }),
      readyMask: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
      widths: fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 8 }),
      runningMask: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      // GPUs a running job holds beyond its width (it is shrinking this tick).
      extra: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 8, maxLength: 8 }),
      mode: fc.constantFrom('partial' as const, 'gang' as const),
      packResized: fc.boolean(),
    })
    .map(({ nodeCount, readyMask, widths, runningMask, extra, mode, packResized }) => {
      const cluster = Array.from({ length: nodeCount }, (_, id) => ({ id, gpus: 4, ready: !!readyMask[id] }));
      // Give some jobs a valid current allocation: their width (or less) packed on the free ready GPUs.
      const free = new Map(cluster.filter((n) => n.ready).map((n) => [n.id, n.gpus]));
      const jobs: ExecJob[] = widths.map((width, id) => {
        const current: number[] = [];
        if (runningMask[id]) {
          for (const [node, gpus] of free) {
            const take = Math.min(gpus, width + (extra[id] ?? 0) - current.length);
            for (let g = 0; g < take; g++) current.push(node);
            free.set(node, gpus - take);
          }
        }
        return { id, width, current };
      });
      return { cluster, jobs, mode, packResized };
    });

  it('never overfills a node, uses only ready nodes, and gives each job its width unless short', () => {
    fc.assert(
      fc.property(scenario, ({ cluster, jobs, mode, packResized }) => {
        const options = { gpusPerNode: 4, maxNodes: 50, shortfall: mode, packResized };
        const out = executeWidths(jobs, cluster, options);
        const used = new Map<number, number>();
        for (const [id, allocation] of out.allocations) {
          const job = jobs.find((j) => j.id === id) as ExecJob;
          if (!out.short.includes(id)) expect(allocation).toHaveLength(job.width);
          else expect(allocation.length).toBeLessThan(job.width);
          for (const node of allocation) used.set(node, (used.get(node) ?? 0) + 1);
        }
        for (const [node, gpus] of used) {
          const n = cluster.find((c) => c.id === node);
          expect(n?.ready).toBe(true);
          expect(gpus).toBeLessThanOrEqual(4);
        }
        // Every job is either placed or waiting, never both, never lost.
        for (const job of jobs) expect(out.allocations.has(job.id)).toBe(!out.waiting.includes(job.id));
        // A running job whose allocation was right keeps it untouched.
        for (const job of jobs) {
          if (job.current.length === job.width && job.current.every((n) => cluster[n]?.ready)) {
            expect(out.allocations.get(job.id)).toEqual(job.current);
          }
        }
        // No running job is stopped.
        for (const job of jobs) if (job.current.length > 0) expect(out.allocations.has(job.id)).toBe(true);
        // Gang mode never starts a job short; only one already running short can stay short.
        if (mode === 'gang') {
          for (const id of out.short) expect(jobs[id]?.current.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
