/**
 * A stop's SIGTERM reaches the command's main process once, whatever boa's restarts do meanwhile: a
 * second one cuts a checkpointing handler's save short (torchrun's agent ends at once on it). boa may
 * send its supervisor a second SIGTERM: a restart that finds the replica running without its record
 * sends one every time (its folder removed, boa restarted twice within the grace), and one killed
 * between sending a stop and recording it sent sends it again at adoption. The supervisor passes on
 * the first only, and boa does not send a lost supervisor's command one the supervisor said it sent.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';
import { lines, loggerPid, lostJob as job, termLogger, until } from './lost-supervisor.ts';

const dirs = localExecutorDirs('boa-sigterm-once-');
afterEach(() => dirs.cleanup());

/** A running replica of job 1 whose command logs every SIGTERM to `log` and only a SIGKILL ends. */
async function running(dataDir: string) {
  const dir = join(dataDir, 'jobs/1/1');
  const log = join(dataDir, 'signals');
  const desired = job(1, termLogger(dataDir, log, 'main'));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 60 });
  await settle(executor, [desired], (s) => s[0]?.phase === 'running');
  await loggerPid(log, 'main');
  const group = Number(readFileSync(join(dir, '0.group'), 'utf8'));
  const supervisor = (JSON.parse(readFileSync(join(dir, '0.pid'), 'utf8')) as { pid: number }).pid;
  // Its folder may be removed below: killed after the test by these.
  dirs.track(group);
  dirs.track(supervisor);
  return { dir, log, executor, desired, supervisor };
}

/** Time for a signal sent to be passed on and logged. */
const settleSignals = () => new Promise((r) => setTimeout(r, 700));

/**
 * Stops the replica, then leaves what a kill -9 of boa between the SIGTERM and its second record
 * leaves: the stop, not said sent.
 */
async function stopThenKillBoa(executor: LocalExecutor, dir: string, log: string) {
  expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
  await until(() => lines(log).length === 1);
  await executor.close();
  const { at } = JSON.parse(readFileSync(join(dir, '0.stop'), 'utf8')) as { at: number };
  writeFileSync(join(dir, '0.stop'), JSON.stringify({ at }));
}

/** A restarted boa adopts the stopping replica and sends what it owes: the command has had one SIGTERM. */
async function adoptExpectingOneSigterm(dataDir: string, log: string) {
  const restarted = new LocalExecutor({ dataDir, terminationGraceSeconds: 60 });
  try {
    expect((await restarted.reconcile([]))[0]?.phase).toBe('stopping');
    await settleSignals();
    await restarted.reconcile([]);
    expect(lines(log)).toEqual(['main']);
  } finally {
    await restarted.close();
  }
}

describe.runIf(existsSync('/proc/self/stat'))('local executor: a stop SIGTERMs the command once', () => {
  it('a replica running without its record, boa restarted twice within its grace: the command gets one SIGTERM', async () => {
    const dataDir = dirs.temp();
    const { dir, log, executor, desired } = await running(dataDir);
    await executor.close();
    rmSync(join(dataDir, 'jobs/1'), { recursive: true, force: true });
    // Each start finds it running unrecorded and stops it (replica_unrecorded).
    const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 60 });
    await until(() => lines(log).length === 1);
    await second.reconcile([desired]);
    await second.close();
    const third = new LocalExecutor({ dataDir, terminationGraceSeconds: 60 });
    try {
      expect(await third.reconcile([desired]), 'not started beside it').toEqual([]);
      await settleSignals();
      expect(lines(log)).toEqual(['main']);
      expect(existsSync(join(dir, '0.exit'))).toBe(false);
    } finally {
      await third.close();
    }
  });

  it('boa killed between sending a stop and recording it sent: the command gets one SIGTERM at adoption', async () => {
    const dataDir = dirs.temp();
    const { dir, log, executor } = await running(dataDir);
    await stopThenKillBoa(executor, dir, log);
    await adoptExpectingOneSigterm(dataDir, log);
  });

  it('the same, its supervisor lost after it passed the SIGTERM on: boa sends the command none again', async () => {
    const dataDir = dirs.temp();
    const { dir, log, executor, supervisor } = await running(dataDir);
    await stopThenKillBoa(executor, dir, log);
    process.kill(supervisor, 'SIGKILL');
    await until(() => !processExists(supervisor));
    await adoptExpectingOneSigterm(dataDir, log);
  });

  it('a SIGTERM from outside passed on, its supervisor lost, then stopped by boa: the command gets none again', async () => {
    const dataDir = dirs.temp();
    const { log, executor, supervisor } = await running(dataDir);
    try {
      // As a machine's shutdown sends it: the supervisor passes it on, and is then lost.
      process.kill(supervisor, 'SIGTERM');
      await until(() => lines(log).length === 1);
      process.kill(supervisor, 'SIGKILL');
      await until(() => !processExists(supervisor));
      for (let i = 0; i < 3; i++) {
        expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
        await new Promise((r) => setTimeout(r, 150));
      }
      await settleSignals();
      expect(lines(log)).toEqual(['main']);
    } finally {
      await executor.close();
    }
  });

  it('its folder removed, its supervisor lost after it passed the SIGTERM on: boa sends the command none again', async () => {
    const dataDir = dirs.temp();
    const { log, executor, supervisor } = await running(dataDir);
    try {
      rmSync(join(dataDir, 'jobs/1'), { recursive: true, force: true });
      expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
      await until(() => lines(log).length === 1);
      // The supervisor said it passed it on just before it did (in a folder it makes again, as it does
      // for its exit record), then is lost.
      process.kill(supervisor, 'SIGKILL');
      await until(() => !processExists(supervisor));
      for (let i = 0; i < 4; i++) {
        expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
        await new Promise((r) => setTimeout(r, 150));
      }
      expect(lines(log)).toEqual(['main']);
      // Made again owner-only, as boa makes it: a job's folder holds its logs.
      for (const made of ['jobs/1', 'jobs/1/1']) {
        expect(statSync(join(dataDir, made)).mode & 0o777, made).toBe(0o700);
      }
    } finally {
      await executor.close();
    }
  });
});
