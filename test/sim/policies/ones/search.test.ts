import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WidthBounds } from '../../../../src/sim/policies/ones/caps.ts';
import { isFeasible, pad, repair } from '../../../../src/sim/policies/ones/operators.ts';
import { EvolutionarySearch, ONES_SEARCH } from '../../../../src/sim/policies/ones/search.ts';
import {
  compareFitness,
  evaluate,
  remainingUtilisation,
  type SearchJob,
  type SearchProblem,
  srufOrder,
} from '../../../../src/sim/policies/ones/sruf.ts';
import { seededUniform } from '../../../../src/sim/trace-gen/random.ts';

/** A job whose run time left is `oneGpu / w` at w GPUs (linear scaling). */
function linearJob(id: number, oneGpu: number, bounds: WidthBounds, current = 0, fresh = false): SearchJob {
  const remaining = new Float64Array(bounds.hi + 1);
  for (let w = 1; w <= bounds.hi; w++) remaining[w] = oneGpu / w;
  return { id, bounds, current, fresh, remaining };
}
const waiting = (hi: number): WidthBounds => ({ lo: 1, hi, canStop: true, pinned: false });
const running = (w: number, hi = 2 * w): WidthBounds => ({
  lo: Math.ceil(w / 2),
  hi,
  canStop: true,
  pinned: false,
});
const pinned = (w: number): WidthBounds => ({ lo: w, hi: w, canStop: false, pinned: true });
const search = (seed: number, generations = ONES_SEARCH.generations) => {
  const uniform = seededUniform(seed);
  return new EvolutionarySearch(() => uniform.next(), { ...ONES_SEARCH, generations });
};

describe('SRUF', () => {
  it('orders jobs by remaining 1-GPU time, least first', () => {
    const problem: SearchProblem = {
      gpus: 4,
      restartSeconds: 30,
      jobs: [linearJob(7, 300, waiting(1)), linearJob(8, 100, waiting(1)), linearJob(9, 200, waiting(1))],
    };
    expect(srufOrder(problem)).toEqual([1, 2, 0]);
  });

  it('scores remaining GPU-time, with the restart for a width that changes', () => {
    const job = linearJob(1, 400, running(2, 4), 2);
    expect(remainingUtilisation(job, 2, 30)).toBeCloseTo(2 * 200);
    expect(remainingUtilisation(job, 4, 30)).toBeCloseTo(4 * (100 + 30));
    expect(remainingUtilisation(job, 0, 30)).toBe(0);
    // More GPUs used wins before the score is looked at.
    expect(compareFitness({ used: 8, score: 1000 }, { used: 7, score: 10 })).toBeLessThan(0);
    expect(compareFitness({ used: 8, score: 10 }, { used: 8, score: 1000 })).toBeLessThan(0);
  });
});

describe('operators', () => {
  it('pads one GPU to each new job first, then grows jobs in SRUF order to their limit', () => {
    const problem: SearchProblem = {
      gpus: 6,
      restartSeconds: 30,
      jobs: [
        linearJob(1, 1000, waiting(4)),
        linearJob(2, 100, waiting(4)),
        linearJob(3, 5000, waiting(4), 0, true),
      ],
    };
    const widths = new Int32Array(3);
    pad(problem, widths, srufOrder(problem), [2]);
    // The new job gets 1; then job 2 (least remaining) grows to 4; job 1 gets the last GPU.
    expect([...widths]).toEqual([1, 4, 1]);
  });

  it('takes a GPU for a new job from the job that has run longest, within its bounds (refresh)', () => {
    // A full 12-GPU cluster: job 1 (4 GPUs, ran 100 s), job 2 (4 GPUs, ran 5000 s, pinned), job 3 (ran
    // 3000 s, 4 GPUs). Two new jobs arrive: job 2 is pinned, so both GPUs come from job 3.
    const problem: SearchProblem = {
      gpus: 12,
      restartSeconds: 30,
      jobs: [
        { ...linearJob(1, 1000, running(4), 4), processed: 100 },
        { ...linearJob(2, 1000, pinned(4), 4), processed: 5000 },
        { ...linearJob(3, 1000, running(4), 4), processed: 3000 },
        linearJob(4, 100, waiting(1), 0, true),
        linearJob(5, 100, waiting(1), 0, true),
      ],
    };
    const widths = Int32Array.from([4, 4, 4, 0, 0]);
    pad(problem, widths, srufOrder(problem), [3, 4]);
    expect([...widths]).toEqual([4, 4, 2, 1, 1]);
    // Job 3 may halve to 2 and no further: a third new job takes from job 1, the next longest.
    const three = { ...problem, jobs: [...problem.jobs, linearJob(6, 100, waiting(1), 0, true)] };
    const more = Int32Array.from([4, 4, 4, 0, 0, 0]);
    pad(three, more, srufOrder(three), [3, 4, 5]);
    expect([...more]).toEqual([3, 4, 2, 1, 1, 1]);
  });

  it('repairs an over-full vector by trimming the jobs last in SRUF order, never a pinned one', () => {
    const problem: SearchProblem = {
      gpus: 4,
      restartSeconds: 30,
      jobs: [
        linearJob(1, 9000, pinned(2), 2),
        linearJob(2, 5000, running(2, 4), 2),
        linearJob(3, 100, waiting(2)),
      ],
    };
    const widths = Int32Array.from([0, 4, 2]);
    repair(problem, widths, srufOrder(problem));
    expect([...widths]).toEqual([2, 0, 2]);
    expect(isFeasible(problem, widths)).toBe(true);
  });
});

const arbitraryProblem = fc
  .record({
    gpus: fc.integer({ min: 1, max: 24 }),
    jobs: fc.array(
      fc.record({
        oneGpu: fc.integer({ min: 60, max: 50_000 }),
        current: fc.integer({ min: 0, max: 8 }),
        limit: fc.integer({ min: 1, max: 8 }),
        pinned: fc.boolean(),
        fresh: fc.boolean(),
      }),
      { minLength: 1, maxLength: 12 },
    ),
  })
  .map(({ gpus, jobs }) => {
    // Current allocations must fit the cluster: later jobs that would not fit are waiting.
    let used = 0;
    const out = jobs.map((j, id) => {
      const current = used + j.current <= gpus ? j.current : 0;
      used += current;
      const bounds: WidthBounds =
        current === 0
          ? waiting(Math.min(j.limit, gpus))
          : j.pinned
            ? pinned(current)
            : {
                lo: Math.ceil(current / 2),
                hi: Math.max(1, Math.min(2 * current, j.limit, gpus)),
                canStop: true,
                pinned: false,
              };
      const fixed = { ...bounds, lo: Math.min(bounds.lo, bounds.hi) };
      return linearJob(id, j.oneGpu, fixed, current, j.fresh && current === 0);
    });
    return { gpus, restartSeconds: 30, jobs: out } satisfies SearchProblem;
  });

describe('the evolutionary search', () => {
  it('never returns an infeasible allocation, and never scores worse than keeping things as they are', () => {
    fc.assert(
      fc.property(arbitraryProblem, fc.integer({ min: 1, max: 1000 }), (problem, seed) => {
        const s = search(seed);
        for (let round = 0; round < 3; round++) {
          const result = s.run(problem);
          expect(isFeasible(problem, result.widths)).toBe(true);
          expect(compareFitness(result.fitness, result.baseline)).toBeLessThanOrEqual(0);
          expect(result.fitness).toEqual(evaluate(problem, result.widths));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('stops a long job for a short one when that lowers the remaining utilisation', () => {
    // Two GPUs: the long job holds both (10 000 s of 1-GPU work left); the short one (100 s) waits.
    // Keeping: 2 x 5000 = 10 000 GPU-s; swapping: 2 x (50 + 30) = 160 GPU-s.
    const problem: SearchProblem = {
      gpus: 2,
      restartSeconds: 30,
      jobs: [linearJob(1, 10_000, running(2, 2), 2), linearJob(2, 100, waiting(2))],
    };
    const result = search(3, 30).run(problem);
    expect([...result.widths]).toEqual([0, 2]);
    expect(result.baseline).toEqual({ used: 2, score: 10_000 });
    expect(result.fitness.score).toBeCloseTo(160);
  });

  it('carries its population: a later round starts from the last best', () => {
    const problem: SearchProblem = {
      gpus: 2,
      restartSeconds: 30,
      jobs: [linearJob(1, 10_000, running(2, 2), 2), linearJob(2, 100, waiting(2))],
    };
    // A draw of 1 never mutates and crossover never swaps: only carried survivors can bring the swap.
    const uniform = seededUniform(3);
    let explore = true;
    const s = new EvolutionarySearch(() => (explore ? uniform.next() : 1), {
      ...ONES_SEARCH,
      generations: 30,
    });
    expect([...s.run(problem).widths]).toEqual([0, 2]);
    explore = false;
    expect([...s.run(problem).widths]).toEqual([0, 2]);
    const fresh = new EvolutionarySearch(() => 1, { ...ONES_SEARCH, generations: 30 });
    expect([...fresh.run(problem).widths]).toEqual([2, 0]);
  });
});
