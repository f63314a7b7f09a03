/**
 * The rate estimator reads the submissions within its window about once a minute. Jobs are never
 * pruned, so that read must find the window's jobs by their submission time, not visit every job.
 */
import { describe, expect, it, vi } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 1);

function job(className: string, submittedAt: number) {
  return { name: className, className, tokenHash: 'h', state: 'done', submittedAt, allocation: [] };
}

describe('Repository.submissionsSince', () => {
  it("returns the window's submissions, found through an index on the submission time", () => {
    const db = openDb(':memory:');
    const repo = new Repository(db);
    for (let i = 0; i < 200; i++) repo.insertJob(job(i % 2 === 0 ? 'a' : 'b', T0 + i * HOUR));
    const since = T0 + 195 * HOUR;

    const statements: string[] = [];
    const prepare = db.$client.prepare.bind(db.$client);
    const spy = vi.spyOn(db.$client, 'prepare').mockImplementation(((source: string) => {
      statements.push(source);
      return prepare(source);
    }) as typeof db.$client.prepare);
    const got = repo.submissionsSince(since);
    spy.mockRestore();

    expect(got.map((s) => s.submittedAt).sort((x, y) => x - y)).toEqual(
      [196, 197, 198, 199].map((i) => T0 + i * HOUR),
    );
    const read = statements.find((s) => /from "jobs"/i.test(s));
    expect(read, statements.join('\n')).toBeDefined();
    const plan = (db.$client.prepare(`EXPLAIN QUERY PLAN ${read}`).all(since) as Array<{ detail: string }>)
      .map((row) => row.detail)
      .join('; ');
    expect(plan).toMatch(/SEARCH jobs USING (COVERING )?INDEX \w+ \(submitted_at>\?\)/);
    db.$client.close();
  });
});
