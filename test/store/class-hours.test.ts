/**
 * The ledger's allocated GPU-time by class, whole past hours kept in memory (class-hours.ts): every
 * query equals the sum over the samples themselves, as samples are appended between queries (one
 * spanning hours, as boa's downtime writes), and after a rolled-back sample.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';

const HOUR = 3_600_000;
const CLASSES = ['bert', 'cifar10', 'imagenet'];

interface Sample {
  from: number;
  to: number;
  byClass: Record<string, number>;
}

/** The sum straight from the samples, clipped to [from, to]. */
function expected(samples: readonly Sample[], from: number, to: number): Map<string, number> {
  const sums = new Map<string, number>();
  for (const s of samples) {
    const overlap = Math.max(0, Math.min(s.to, to) - Math.max(s.from, from));
    if (overlap <= 0) continue;
    for (const [c, gpus] of Object.entries(s.byClass))
      if (gpus > 0) sums.set(c, (sums.get(c) ?? 0) + gpus * overlap);
  }
  return new Map([...sums].filter(([, ms]) => ms > 0));
}

const step = fc.record({
  // Minutes to a few hours (a restart after downtime writes one sample over all of it).
  lengthMs: fc.oneof(fc.integer({ min: 1, max: 600_000 }), fc.integer({ min: HOUR, max: 5 * HOUR })),
  gpus: fc.tuple(fc.nat(8), fc.nat(8), fc.nat(8)),
  query: fc.option(
    fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
  ),
  rolledBack: fc.boolean(),
});

describe("the ledger's GPU-time by class", () => {
  it('equals the samples summed directly for any span, as samples are appended and rolled back', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const db = openDb(':memory:');
        try {
          const repo = new Repository(db);
          const samples: Sample[] = [];
          let at = 1_000;
          for (const s of steps) {
            const byClass = Object.fromEntries(CLASSES.map((c, i) => [c, s.gpus[i] as number]));
            const total = s.gpus.reduce((a, b) => a + b, 0);
            const sample = { from: at, to: at + s.lengthMs, byClass };
            if (s.rolledBack) {
              expect(() =>
                repo.transaction(() => {
                  repo.ledger.recordAllocation(sample.from, sample.to, total, null, byClass);
                  // Read inside the transaction: the kept hours must not outlive the rollback.
                  repo.ledger.allocatedGpuMsByClass(0, sample.to);
                  throw new Error('SQLITE_IOERR');
                }),
              ).toThrow('SQLITE_IOERR');
            } else {
              repo.transaction(() =>
                repo.ledger.recordAllocation(sample.from, sample.to, total, null, byClass),
              );
              samples.push(sample);
              at = sample.to;
            }
            const end = at + HOUR;
            const [a, b] = s.query ?? [0, 1];
            const from = Math.floor(Math.min(a, b) * end);
            const to = Math.floor(Math.max(a, b) * end);
            expect(repo.ledger.allocatedGpuMsByClass(from, to)).toEqual(expected(samples, from, to));
          }
        } finally {
          db.$client.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});
