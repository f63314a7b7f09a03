/**
 * The submissions the rate estimator reads, mirrored in memory (src/store/submission-mirror.ts), are
 * the store's own over any sequence of submissions (some dated before others), reads reaching back
 * by different amounts, trims, and transactions rolled back after a read took their rows in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';
import { SubmissionMirror, submissionSource } from '../../src/store/submission-mirror.ts';

const SQL = 'SELECT class_name AS className, submitted_at AS submittedAt FROM jobs WHERE submitted_at > ?';

const step = fc.record({
  submitted: fc.array(fc.integer({ min: -30, max: 5 }), { maxLength: 6 }),
  advance: fc.integer({ min: 0, max: 80 }),
  reach: fc.integer({ min: 0, max: 120 }),
  rollBack: fc.boolean(),
});

const sorted = (rows: ReadonlyArray<{ className: string; submittedAt: number }>) =>
  rows.map((r) => `${r.submittedAt}:${r.className}`).sort();

function job(className: string, submittedAt: number) {
  return { name: className, className, tokenHash: 'h', state: 'waiting', submittedAt, allocation: [] };
}

describe('submissions mirrored in memory', () => {
  it("equals the store's over submissions, reads, trims and roll-backs", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const db = openDb(':memory:');
        try {
          const sql = db.$client.prepare(SQL);
          const repo = new Repository(db);
          // A mirror that trims every 3 reads, beside the repository's own (every 64).
          const mirror = new SubmissionMirror(submissionSource(db), 3);
          let now = 1000;
          for (const [i, s] of steps.entries()) {
            now += s.advance;
            const since = now - s.reach;
            const insert = () => {
              for (const offset of s.submitted) repo.insertJob(job(`c${i % 3}`, now + offset));
            };
            if (s.rollBack) {
              expect(() =>
                repo.transaction(() => {
                  insert();
                  // Read inside the transaction: the mirror takes in rows the roll-back removes.
                  expect(sorted(repo.submissionsSince(since))).toEqual(sorted(sql.all(since) as never));
                  throw new Error('rolled back');
                }),
              ).toThrow('rolled back');
              mirror.reset();
            } else insert();
            const expected = sorted(sql.all(since) as never);
            expect(sorted(repo.submissionsSince(since))).toEqual(expected);
            expect(sorted(mirror.since(since))).toEqual(expected);
          }
        } finally {
          db.$client.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads only the jobs added since the last read, once it holds the window', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      for (let i = 0; i < 50; i++) repo.insertJob(job('a', 1000 + i));
      expect(repo.submissionsSince(1000)).toHaveLength(49);
      const statements: string[] = [];
      const source = submissionSource(db);
      const asked: number[] = [];
      const mirror = new SubmissionMirror({
        submittedAfter: (since) => {
          statements.push(`after ${since}`);
          return source.submittedAfter(since);
        },
        idsAfter: (id) => {
          asked.push(id);
          return source.idsAfter(id);
        },
      });
      expect(mirror.since(1010)).toHaveLength(39);
      repo.insertJob(job('b', 1050));
      expect(mirror.since(1020)).toHaveLength(30);
      // One full read; after it, only the ids above the highest seen.
      expect(statements).toEqual(['after 1010']);
      expect(asked).toEqual([50]);
      // A read further back than the mirror holds asks the store again.
      expect(mirror.since(1005)).toHaveLength(45);
      expect(statements).toEqual(['after 1010', 'after 1005']);
    } finally {
      db.$client.close();
    }
  });

  it('holds the window its readers slide forward, not every job the service ran', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      const mirror = new SubmissionMirror(submissionSource(db), 8);
      // A job a minute for two days, read as the estimator does: the last day, every minute.
      for (let minute = 0; minute < 2 * 1440; minute++) {
        repo.insertJob(job('a', minute));
        expect(mirror.since(minute - 1440)).toHaveLength(Math.min(minute + 1, 1440));
      }
      expect(mirror.heldRows).toBeLessThanOrEqual(1440 + 8);
      // Trimmed to the oldest of its last reads: a read older than that asks the store again.
      const last = 2 * 1440 - 1;
      for (const reach of [100, 300, 200, 250, 150, 120, 110, 130]) mirror.since(last - reach);
      expect(mirror.heldRows).toBe(300);
      expect(mirror.since(last - 301)).toHaveLength(301);
    } finally {
      db.$client.close();
    }
  });

  it('reads nothing after NaN, as the store does, and reads as before after it', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      for (let i = 0; i < 6; i++) repo.insertJob(job('a', 1000 + i));
      expect(repo.submissionsSince(Number.NaN)).toEqual([]);
      expect(repo.submissionsSince(999)).toHaveLength(6);
    } finally {
      db.$client.close();
    }
  });
});
