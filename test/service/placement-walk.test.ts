/**
 * IncrementalPlacement finds a job's record by walking its records in id order alongside jobs that come
 * in id order (the service's), and by a map lookup otherwise. The same ticks given twice, once with ids
 * ascending in priority order (the walk) and once relabelled descending (every lookup in the map), place
 * every job alike: jobs arriving, leaving, changing width, stopped elsewhere (allocation reset), nodes
 * going, booting and keep-only, and after a pass that throws midway.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import type { PoolNode } from '../../src/service/ports.ts';

interface Job {
  id: number;
  width: number;
  allocation: string[];
}

/** A job as both placements see it: its id ascending for one, descending for the other. */
interface Twin {
  walked: Job;
  mapped: Job;
}

const BOUNDS = { gpusPerNode: 4, minNodes: 0, maxNodes: 100 };
const widthOf = (job: Job) => job.width;

const step = fc.record({
  widths: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 14 }),
  leave: fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
  reset: fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
  // 0 gone, 1 ready, 2 ready keep-only (in its not-ready grace), 3 ready with 2 GPUs.
  nodes: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
  // Some ticks hand the same jobs again with nothing changed.
  repeat: fc.boolean(),
  // Some ticks first fail a pass at this job (a width that throws), after the jobs before it moved.
  throwAt: fc.option(fc.integer({ min: 0, max: 13 }), { nil: undefined }),
});

function poolNode(i: number, state: number): PoolNode {
  return { id: `i-${i}`, launchedAt: 0, gpus: state === 3 ? 2 : 4, ready: true, keepOnly: state === 2 };
}

describe('IncrementalPlacement: the walk by id and the map', () => {
  it('place every job alike over random ticks', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 16, size: 'max' }), (steps) => {
        const walked = new IncrementalPlacement();
        const mapped = new IncrementalPlacement();
        let twins: Twin[] = [];
        let nextId = 1;
        for (const s of steps) {
          twins = twins.filter((_, i) => !s.leave[i]);
          twins.forEach((twin, i) => {
            const width = s.widths[i];
            if (width !== undefined && i % 2 === 0) twin.walked.width = twin.mapped.width = width;
            if (s.reset[i]) twin.walked.allocation = twin.mapped.allocation = [];
          });
          for (const width of s.widths.slice(twins.length)) {
            const id = nextId++;
            twins.push({
              walked: { id, width, allocation: [] },
              mapped: { id: 1_000_000 - id, width, allocation: [] },
            });
          }
          const ready = s.nodes.flatMap((state, i) => (state === 0 ? [] : [poolNode(i, state)]));
          if (s.throwAt !== undefined && s.throwAt < twins.length) {
            const failing = (job: Job, jobs: Job[]) => {
              if (job === jobs[s.throwAt!]) throw new RangeError('width out of range');
              return job.width;
            };
            const walkedJobs = twins.map((t) => t.walked);
            const mappedJobs = twins.map((t) => t.mapped);
            expect(() => walked.place(walkedJobs, (j) => failing(j, walkedJobs), ready, BOUNDS)).toThrow();
            expect(() => mapped.place(mappedJobs, (j) => failing(j, mappedJobs), ready, BOUNDS)).toThrow();
          }
          for (let round = 0; round < (s.repeat ? 2 : 1); round++) {
            const a = walked.place(
              twins.map((t) => t.walked),
              widthOf,
              ready,
              BOUNDS,
            );
            const b = mapped.place(
              twins.map((t) => t.mapped),
              widthOf,
              ready,
              BOUNDS,
            );
            expect([...a.changed].map(([id, allocation]) => [1_000_000 - id, allocation])).toEqual([
              ...b.changed,
            ]);
            expect([a.wantedGpus, a.allocatedGpus, a.desiredNodes]).toEqual([
              b.wantedGpus,
              b.allocatedGpus,
              b.desiredNodes,
            ]);
            for (let i = 0; i < 8; i++) expect(walked.gpusOn(`i-${i}`)).toBe(mapped.gpusOn(`i-${i}`));
            for (const { walked: w, mapped: m } of twins) {
              const next = a.changed.get(w.id);
              if (next !== undefined) w.allocation = next as string[];
              const other = b.changed.get(m.id);
              if (other !== undefined) m.allocation = other as string[];
            }
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
