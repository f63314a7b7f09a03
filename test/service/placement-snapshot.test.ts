/**
 * IncrementalPlacement.snapshot(): a pass tried and put back leaves the placement as if it had never
 * run (the idle fill's give-back, idle-fill-pass.ts). Property: two placements fed the same ticks, one
 * of them also trying a pass without kept widths and putting it back each tick, place every tick the
 * same, with nodes coming, going, turning keep-only and offering fewer GPUs. Its jobs by node (jobsOn, the
 * idle fill's index) are those a scan of every job's slots finds, put back too.
 */
import { describe, expect, it } from 'vitest';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import type { PoolNode } from '../../src/service/ports.ts';

interface Job {
  readonly id: number;
  allocation: string[];
  width: number;
}
const BOUNDS = { gpusPerNode: 4, minNodes: 0, maxNodes: 100 };

/** A small deterministic generator (a test needs the same cases every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function state(placement: IncrementalPlacement, jobs: readonly Job[], nodes: readonly PoolNode[]) {
  return {
    allocated: placement.allocatedGpus,
    onNodes: nodes.map((node) => placement.gpusOn(node.id)),
    free: [...placement.freeGpus()].sort((x, y) => x[0] - y[0]),
    slots: jobs.map((job) => placement.slotsOf(job.id)?.join() ?? '-'),
    jobsOnEachNode: jobsOnEachNode(placement, jobs).indexed,
  };
}

/** Each numbered node's jobs (`jobs` in id order) as placement.jobsOn has them and as a scan finds them. */
function jobsOnEachNode(placement: IncrementalPlacement, jobs: readonly Job[]) {
  const numbers = Array.from({ length: placement.numberedNodes }, (_, n) => n);
  return {
    indexed: numbers.map((n) => placement.jobsOn([n])),
    scanned: numbers.map((n) =>
      jobs.filter((job) => placement.slotsOf(job.id)?.includes(n)).map((job) => job.id),
    ),
  };
}

function ticks(seed: number): void {
  const next = random(seed);
  const plain = new IncrementalPlacement();
  const tried = new IncrementalPlacement();
  let jobs: Job[] = [];
  let nextId = 1;
  const nodeCount = 2 + Math.floor(next() * 4);
  for (let tick = 0; tick < 12; tick++) {
    const nodes: PoolNode[] = [];
    for (let i = 0; i < nodeCount; i++) {
      if (next() < 0.1) continue;
      const keepOnly = next() < 0.15;
      const gpus = next() < 0.15 ? 3 : 4;
      nodes.push({ id: `n${i}`, launchedAt: 0, gpus, ready: !keepOnly, keepOnly });
    }
    jobs = jobs.filter(() => next() > 0.1);
    while (next() < 0.5) jobs.push({ id: nextId++, allocation: [], width: 1 + Math.floor(next() * 5) });
    for (const job of jobs) if (next() < 0.2) job.width = Math.floor(next() * 6);
    const widthOf = (job: Job) => job.width;
    // A job on more GPUs than its width keeps them where it runs (the idle fill's kept width).
    const keptOf = (job: Job) =>
      job.width > 0 && job.allocation.length > job.width ? job.allocation.length : 0;
    const expected = plain.place(jobs, widthOf, nodes, BOUNDS, keptOf);
    const first = tried.place(jobs, widthOf, nodes, BOUNDS, keptOf);
    const putBack = tried.snapshot();
    tried.place(jobs, widthOf, nodes, BOUNDS);
    putBack();
    expect([...first.changed], `seed ${seed} tick ${tick}`).toEqual([...expected.changed]);
    expect(state(tried, jobs, nodes), `seed ${seed} tick ${tick}`).toEqual(state(plain, jobs, nodes));
    const { indexed, scanned } = jobsOnEachNode(plain, jobs);
    expect(indexed, `seed ${seed} tick ${tick}`).toEqual(scanned);
    for (const job of jobs) job.allocation = [...(expected.changed.get(job.id) ?? job.allocation)];
    // Widen some jobs onto free GPUs of their one node, in both (what the idle fill does after a pass).
    for (const job of jobs) {
      const slots = plain.slotsOf(job.id);
      if (!slots || slots.length === 0 || next() < 0.5 || slots.some((n) => n !== slots[0])) continue;
      const free = plain.freeGpus().get(slots[0] as number) ?? 0;
      if (free <= 0) continue;
      const to = [...slots, ...Array<number>(1 + Math.floor(next() * free)).fill(slots[0] as number)];
      const moved = plain.moveTo(job.id, to, job.allocation);
      tried.moveTo(job.id, to, job.allocation);
      if (moved) job.allocation = [...moved];
    }
    const afterMoves = jobsOnEachNode(tried, jobs);
    expect(afterMoves.indexed, `seed ${seed} tick ${tick}, after the moves`).toEqual(afterMoves.scanned);
  }
}

describe('a placement pass tried and put back', () => {
  it('leaves the placement as one that never tried it, over 500 random runs of 12 ticks', () => {
    for (let seed = 1; seed <= 500; seed++) ticks(seed);
  });
});
