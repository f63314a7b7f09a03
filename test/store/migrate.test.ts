/**
 * A database written by an older boa migrates at start and keeps its rows: here ones made by the
 * migrations before 0005_job_idempotency_key (jobs without an Idempotency-Key column) and later ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';
import { migrationsBefore } from './schema-versions.ts';
import { jobFromRow } from '../../src/service/jobs.ts';
import { closeGpuTime, gpuMsAt } from '../../src/service/gpu-time.ts';
import { jobView } from '../../src/service/views.ts';
import type { WaitContext } from '../../src/service/waiting-for.ts';
import { outcome } from '../../src/cli/commands/jobs.ts';

/** No tick has run, no node is coming: the view's wait read before any tick. */
const NOT_TICKED: WaitContext = { lastTickAt: undefined, nodesComing: false, plannedClasses: new Set() };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-migrate-'));
  dirs.push(dir);
  return dir;
}

/** The committed migrations up to `tag`, in a temp dir. */
function before(tag: string): string {
  return migrationsBefore(tag, tempDir());
}

describe('migrating a stored database', () => {
  it('a database from before the Idempotency-Key migration keeps its jobs and takes keys after', () => {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before('0005_job_idempotency_key') });
    const insert = old.prepare(
      `INSERT INTO jobs (name, class_name, token_hash, state, submitted_at, allocation)
       VALUES (?, 'cifar10', ?, ?, 1000, '[]')`,
    );
    insert.run('old-a', 'a'.repeat(64), 'done');
    insert.run('old-b', 'b'.repeat(64), 'waiting');
    const columns = () => old.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('jobs');
    expect(columns()).not.toContain('idempotency_key');
    old.close();

    const store = openStore(dataDir);
    try {
      const repo = new Repository(store.db);
      const kept = repo.listJobs(10);
      expect(kept.map((j) => [j.name, j.state, j.idempotencyKey])).toEqual([
        ['old-a', 'done', null],
        ['old-b', 'waiting', null],
      ]);
      // Old jobs have no key (many NULLs in the unique index); a new job's key is found again.
      const job = repo.insertJob({
        name: 'new',
        className: 'cifar10',
        tokenHash: 'c'.repeat(64),
        state: 'waiting',
        submittedAt: 2000,
        allocation: [],
        idempotencyKey: 'k-1',
        requestFingerprint: 'f'.repeat(64),
      });
      expect(repo.jobByIdempotencyKey('k-1')?.id).toBe(job.id);
      expect(() => repo.insertJob({ ...job, id: undefined })).toThrow(/UNIQUE constraint failed/);
    } finally {
      store.close();
    }
  });

  it("a job running before 0009 keeps its epoch's clock: a report does not restart it", () => {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before('0009_epoch_timed_from_report') });
    old
      .prepare(
        `INSERT INTO jobs (name, class_name, token_hash, state, submitted_at, allocation, epoch_started_at)
         VALUES ('running', 'cifar10', ?, 'running', 1000, '["n1"]', 2000)`,
      )
      .run('a'.repeat(64));
    old.close();

    const store = openStore(dataDir);
    try {
      const [job] = new Repository(store.db).listJobs(10);
      expect(job).toMatchObject({ name: 'running', epochStartedAt: 2000, epochTimedFromReport: true });
    } finally {
      store.close();
    }
  });

  it('jobs from before 0010 that started or ended read as having reported; a never-started one does not', () => {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before('0010_last_report_at') });
    const insert = old.prepare(
      `INSERT INTO jobs (name, class_name, token_hash, state, submitted_at, started_at, allocation)
       VALUES (?, 'cifar10', ?, ?, 1000, ?, '[]')`,
    );
    insert.run('done', 'a'.repeat(64), 'done', 2000);
    insert.run('requeued', 'b'.repeat(64), 'waiting', 2000);
    insert.run('queued', 'c'.repeat(64), 'waiting', null);
    old.close();

    const store = openStore(dataDir);
    try {
      const repo = new Repository(store.db);
      const reports = Object.fromEntries(repo.listJobs(10).map((j) => [j.name, j.lastReportAt]));
      // Whether they reported was not recorded: a done job is not noted "ended without reporting".
      expect(reports).toEqual({ done: 1000, requeued: 1000, queued: null });
      const view = jobView(jobFromRow(repo.listJobs(10).find((j) => j.name === 'done')!), NOT_TICKED, 0);
      expect(view.reportedProgress).toBe(true);
      expect(outcome(view)).toBeNull();
    } finally {
      store.close();
    }
  });

  /** A job running on `gpus` GPUs of node n1, stored by a boa from before `tag`, opened by this one. */
  function runningJobBefore(tag: string, gpus: number) {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before(tag) });
    old
      .prepare(
        `INSERT INTO jobs (name, class_name, token_hash, state, submitted_at, started_at, allocation, width)
         VALUES ('running', 'cifar10', ?, 'running', 1000, 1000, ?, ?)`,
      )
      .run('a'.repeat(64), JSON.stringify(Array.from({ length: gpus }, () => 'n1')), gpus);
    old.close();
    const store = openStore(dataDir);
    const repo = new Repository(store.db);
    return { store, repo, job: jobFromRow(repo.listJobs(10)[0]!) };
  }

  it('a job running before 0012 has no idle-fill GPUs stored: it reads 0, and a tick can save them', () => {
    const { store, repo, job } = runningJobBefore('0012_idle_fill_gpus', 4);
    try {
      expect(job.idleFillGpus).toBe(0);
      repo.saveJobState({ ...job, idleFillGpus: 3 });
      expect(repo.getJob(job.id)?.idleFillGpus).toBe(3);
    } finally {
      store.close();
    }
  });

  it('allocation samples from before 0014 keep their GPUs, with no classes; new ones are split by class', () => {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before('0014_gpus_by_class') });
    old
      .prepare('INSERT INTO allocation_samples (from_ms, to_ms, gpus, expected_gpus) VALUES (?, ?, ?, ?)')
      .run(0, 1000, 4, 4);
    old.close();
    const store = openStore(dataDir);
    try {
      const repo = new Repository(store.db);
      repo.ledger.recordAllocation(1000, 3000, 3, null, { bert: 2, cifar10: 1 });
      expect(repo.ledger.ledgerTotals(0, 3000).allocatedGpuMs).toBe(4 * 1000 + 3 * 2000);
      expect(repo.ledger.allocatedGpuMsByClass(0, 3000)).toEqual(
        new Map([
          ['bert', 4000],
          ['cifar10', 2000],
        ]),
      );
      // Clipped to the span asked for, as the totals are.
      expect(repo.ledger.allocatedGpuMsByClass(2500, 3000)).toEqual(
        new Map([
          ['bert', 1000],
          ['cifar10', 500],
        ]),
      );
    } finally {
      store.close();
    }
  });

  it('a job from before 0013 has no GPU-time kept: it reads null, shown as not kept, and saves', () => {
    const { store, repo, job } = runningJobBefore('0013_gpu_ms', 2);
    try {
      // Its GPU-time before the migration is unknown: none is shown rather than a part of it.
      expect(job.gpuMs).toBeNull();
      expect(gpuMsAt(job, 5000)).toBeNull();
      expect(jobView(job, NOT_TICKED, 5000, 1)).toMatchObject({ gpuHours: null, dollars: null });
      closeGpuTime(job, 5000);
      expect(job.gpuMs).toBeNull();
      repo.saveJobState({ ...job, gpuMs: 7, gpuMsSince: 5000 });
      expect(repo.getJob(job.id)).toMatchObject({ gpuMs: 7, gpuMsSince: 5000 });
    } finally {
      store.close();
    }
  });

  it('a job that had not started before 0013 booked nothing: its GPU-time starts at 0 and counts its run', () => {
    // As a boa of 2026-11-30 (8f5b1827) left a data dir: one job running, one queued, one cancelled in line.
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'boa.sqlite'));
    migrate(drizzle(old), { migrationsFolder: before('0013_gpu_ms') });
    const insert = old.prepare(
      `INSERT INTO jobs (name, class_name, token_hash, state, submitted_at, started_at, allocation, width)
       VALUES (?, 'cifar10', ?, ?, 1000, ?, ?, ?)`,
    );
    insert.run('running', 'a'.repeat(64), 'running', 1500, JSON.stringify(['n1', 'n1']), 2);
    insert.run('queued', 'b'.repeat(64), 'waiting', null, '[]', 0);
    insert.run('cancelled', 'c'.repeat(64), 'cancelled', null, '[]', 0);
    old.close();
    const store = openStore(dataDir);
    try {
      const repo = new Repository(store.db);
      const jobs = new Map(repo.listJobs(10).map((row) => [row.name, jobFromRow(row)]));
      // The running one's GPU-time before the upgrade is unknown: still not kept.
      expect(gpuMsAt(jobs.get('running')!, 5000)).toBeNull();
      expect(gpuMsAt(jobs.get('cancelled')!, 5000)).toBe(0);
      expect(jobView(jobs.get('cancelled')!, NOT_TICKED, 5000, 1)).toMatchObject({ gpuHours: 0 });
      // The queued one runs on 3 GPUs from 6000 (a tick closes the interval before changing it).
      const queued = jobs.get('queued')!;
      closeGpuTime(queued, 6000);
      queued.allocation = ['n1', 'n1', 'n1'];
      repo.saveJobState(queued);
      expect(gpuMsAt(jobFromRow(repo.getJob(queued.id)!), 6000 + 3_600_000)).toBe(3 * 3_600_000);
      expect(jobView(queued, NOT_TICKED, 6000 + 3_600_000, 1)).toMatchObject({ gpuHours: 3 });
    } finally {
      store.close();
    }
  });

  it('a job from before 0015 has no report sequence taken: its first is, and is kept', () => {
    const { store, repo, job } = runningJobBefore('0015_report_sequences', 2);
    try {
      expect(repo.reportSequences.taken(job.id, 'a1')).toBeUndefined();
      repo.reportSequences.record(job.id, 'a1', 3, 5000);
      expect(repo.reportSequences.taken(job.id, 'a1')).toBe(3);
      expect(repo.getJob(job.id)).toMatchObject({ name: 'running', state: 'running' });
    } finally {
      store.close();
    }
  });
});
