/**
 * A tick whose transaction the disk fails (SQLITE_IOERR_WRITE) is undone in memory as a full disk's is,
 * and its log line (main.ts logs each failed tick so) names the database's file and SQLite's code and
 * says what to do, where it gave only SQLite's "disk I/O error" and a stack into boa's code. The hourly
 * pruning's failure is logged the same way (pass-failure.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { logTickFailure } from '../../src/service/pass-failure.ts';
import { pruneAll } from '../../src/service/retention.ts';
import { failTransactions } from '../helpers/store-fault.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function logged() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('a tick the disk fails', () => {
  it('is undone in memory, logged with the file and the code, and the next tick stores it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-tick-io-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const boa = await startService({
      dataDir: dir,
      config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
    });
    cleanups.push(boa.close);
    const { service, scheduler, repo } = boa;
    await service.planner.idle();
    const { job } = service.registerJob('cifar10', 'a');
    await boa.ticks(2);
    expect(job.state).toBe('waiting');

    // The tick that would start the job: its transaction fails as a failing disk's does.
    failTransactions(repo.db.$client, 'SQLITE_IOERR_WRITE', 'disk I/O error');
    const failure = await scheduler.tick().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'SQLITE_IOERR_WRITE' });
    expect(job.state).toBe('waiting');
    expect(repo.getJob(job.id)?.state).toBe('waiting');

    const { logger, lines } = logged();
    logTickFailure(logger, failure, repo.db.$client.name);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      event: 'tick_failed',
      code: 'store_io_error',
      file: join(dir, 'boa.sqlite'),
      sqliteCode: 'SQLITE_IOERR_WRITE',
      error: 'disk I/O error',
    });
    expect(lines[0]!.msg).toMatch(
      /^tick failed, its changes undone \(the next tick tries again\): the disk failed a read or write of the database \(SQLITE_IOERR_WRITE: disk I\/O error\); check the disk/,
    );
    expect(lines[0]!.stack).toBeUndefined();

    await scheduler.settle();
    boa.clock.advance(60);
    await boa.ticks(3);
    expect(job.state).toBe('running');
    expect(repo.getJob(job.id)?.state).toBe('running');
  }, 60_000);

  it("logs boa's own error with its stack", () => {
    const { logger, lines } = logged();
    const error = new TypeError("Cannot read properties of undefined (reading 'width')");
    logTickFailure(logger, error, ':memory:');
    expect(lines[0]).toMatchObject({ event: 'tick_failed', error: error.message, stack: error.stack });
    expect(lines[0]!.code).toBeUndefined();
  });
});

it("logs a pruning the disk fails as a failed tick, with the file and the code (it gave SQLite's message alone)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'boa-prune-io-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const { logger, lines } = logged();
  const boa = await startService({ dataDir: dir, logger });
  cleanups.push(boa.close);
  const { repo } = boa;
  failTransactions(repo.db.$client, 'SQLITE_IOERR_WRITE', 'disk I/O error');
  pruneAll(boa.service, repo.db.$client.name);
  const failed = lines.filter((line) => line.event === 'prune_failed');
  expect(failed).toHaveLength(1);
  expect(failed[0]).toMatchObject({
    level: 50,
    code: 'store_io_error',
    file: join(dir, 'boa.sqlite'),
    sqliteCode: 'SQLITE_IOERR_WRITE',
  });
  expect(failed[0]!.msg).toMatch(
    /^pruning failed, its changes undone \(the next pruning, in an hour, tries again\): the disk failed/,
  );
  // The next pruning goes through.
  lines.length = 0;
  pruneAll(boa.service, repo.db.$client.name);
  expect(lines.filter((line) => line.event === 'prune_failed')).toHaveLength(0);
});
