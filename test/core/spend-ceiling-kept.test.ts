/**
 * Widths running jobs keep under the ceiling (a restart costs more than the GPUs buy) never stop another
 * running job: narrowing by price fits them all, and a kept width that does not fit gives way.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { narrowedByPrice } from '../../src/core/narrowing.ts';
import { parseProfileFile } from '../../src/core/profile.ts';
import { widthsUnderCeiling } from '../../src/core/ceiling-widths.ts';

const concave = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [String(i + 1), (i + 1) ** 0.75]));

interface Job {
  readonly id: number;
  readonly state: string;
  readonly planned: number;
  readonly current: number;
}

function served(jobs: readonly Job[], gpus: number, table: Record<string, number>): number[] {
  const out = widthsUnderCeiling(
    jobs,
    (j) => j.planned,
    (j) => j.current,
    gpus,
    () => table,
  );
  return jobs.map((j) => out.get(j) ?? 0);
}

const running = (count: number, width: number): Job[] =>
  Array.from({ length: count }, (_, id) => ({ id, state: 'running', planned: width, current: width }));

describe('kept widths under the spend ceiling', () => {
  it('give way when the running jobs would not fit: two on 4 GPUs under a ceiling of 6 run on 3 each', () => {
    expect(narrowedByPrice({ planned: [4, 4], current: [4, 4], speedups: [concave, concave] }, 6)).toEqual([
      3, 3,
    ]);
    expect(served(running(2, 4), 6, concave)).toEqual([3, 3]);
  });

  it('keep three imagenet jobs on 4 GPUs running under a ceiling of 2 nodes', () => {
    const file = readFileSync(resolve(import.meta.dirname, '../../data/profiles.json'), 'utf8');
    const imagenet = parseProfileFile(JSON.parse(file)).classes.find((c) => c.name === 'imagenet')!.epochs[0]!
      .speedup;
    const widths = served(running(3, 4), 8, imagenet);
    expect(widths.every((w) => w > 0)).toBe(true);
    expect(widths.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(8);
  });

  it('never leave a running job out while the running jobs narrowed by price fit', () => {
    const tables = fc
      .record({
        listed: fc.subarray([2, 3, 4, 6, 8]),
        speedups: fc.array(fc.integer({ min: 2, max: 24 }), { minLength: 5, maxLength: 5 }),
      })
      .map(({ listed, speedups }) => {
        const table: Record<string, number> = { '1': 1 };
        listed.forEach((w, i) => (table[String(w)] = (speedups[i] as number) / 3));
        return table;
      });
    const jobs = fc.array(
      fc.record({ planned: fc.integer({ min: 1, max: 8 }), current: fc.integer({ min: 1, max: 8 }) }),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(tables, jobs, fc.integer({ min: 1, max: 30 }), (table, raw, gpus) => {
        const all = raw.map((r, id) => ({ id, state: 'running', ...r }));
        const narrowed = narrowedByPrice(
          {
            planned: all.map((j) => j.planned),
            current: all.map((j) => j.current),
            speedups: all.map(() => table),
          },
          gpus,
        );
        fc.pre(narrowed.reduce((a, b) => a + b, 0) <= gpus);
        const widths = served(all, gpus, table);
        expect(widths.every((w) => w > 0)).toBe(true);
        expect(widths.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(gpus);
      }),
      { numRuns: 2000, seed: 1 },
    );
  });
});
