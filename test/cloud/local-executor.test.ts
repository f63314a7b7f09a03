/** The local executor's launcher, and replicas adopted or stopped across restarts and removed folders. */
import { existsSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { job, parentOf, supervisorsOf, until } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

describe('local executor', () => {
  it('starts replicas from its launcher process, never forking the service; reconciles at once start each replica once', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const desired = [job(['sleep', '30'])];
    const [a, b] = await Promise.all([executor.reconcile(desired), executor.reconcile(desired)]);
    expect(a.map((r) => r.phase)).toEqual(['running']);
    expect(b.map((r) => r.phase)).toEqual(['running']);
    const record = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8'));
    dirs.track(record.pid);
    expect(supervisorsOf(dataDir)).toEqual([record.pid]);
    // The supervisor's parent is the launcher, a process of its own that ends with the executor.
    const launcher = parentOf(record.pid);
    expect(launcher).not.toBe(process.pid);
    expect(readFileSync(`/proc/${launcher}/cmdline`, 'utf8')).toContain('replica-launcher.mjs');
    await executor.close();
    expect(processExists(launcher)).toBe(false);
    // The replica runs on (a restarted service adopts it) and its exit is still seen without the launcher.
    expect(processExists(record.pid)).toBe(true);
    process.kill(-record.pid, 'SIGKILL');
    const [gone] = await settle(executor, desired, (s) => s[0]?.interrupted === true);
    expect(gone).toMatchObject({
      phase: 'failed',
      reason: expect.stringContaining('gone without an exit record'),
    });
    await executor.close();
  });

  it('adopts its running replica when restarted on the same data dir under another name (a symlink): never a second copy', async () => {
    const dataDir = temp();
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const desired = [job(['sleep', '30'])];
    expect((await first.reconcile(desired)).map((r) => r.phase)).toEqual(['running']);
    const { pid } = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8'));
    dirs.track(pid);
    await first.close();
    // The service restarted with BOA_DATA_DIR naming the same folder through a link.
    const link = join(temp(), 'data');
    symlinkSync(dataDir, link);
    const again = new LocalExecutor({ dataDir: link, terminationGraceSeconds: 1 });
    const statuses = await again.reconcile(desired);
    expect(statuses).toEqual([expect.objectContaining({ phase: 'running' })]);
    expect(statuses[0]?.interrupted).toBeUndefined();
    expect([...supervisorsOf(dataDir), ...supervisorsOf(link)]).toEqual([pid]);
    // Stopping it stops the one copy.
    await settle(again, [], (s) => s.length === 0);
    expect(processExists(pid)).toBe(false);
    await again.close();
  });

  it('a replica whose folder was removed while it ran: its end is still recorded; after a restart it is stopped, never run twice', async () => {
    const dataDir = temp();
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    // Exits 0 once its folder is gone (a fixed `sleep 0.5` could end before a loaded machine removed it).
    const exitsSoon = [
      job([
        'sh',
        '-c',
        'echo started; while [ -d "$0" ]; do sleep 0.05; done; exit 0',
        join(dataDir, 'jobs/1/1'),
      ]),
    ];
    expect((await first.reconcile(exitsSoon)).map((r) => r.phase)).toEqual(['running']);
    const supervisor = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8')).pid as number;
    dirs.track(supervisor);
    // Removed once the command runs (before, the supervisor's own start fails on the missing folder).
    const log = join(dataDir, 'jobs/1/1/0.log');
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('started'));
    rmSync(join(dataDir, 'jobs/1'), { recursive: true, force: true });
    // Its exit 0 lands all the same: the job finished, not a kill from outside.
    const [ended] = await settle(first, exitsSoon, (s) => s[0]?.phase !== 'running');
    expect(ended).toMatchObject({ phase: 'succeeded', exitCode: 0 });
    expect(ended?.interrupted).toBeUndefined();
    await first.close();

    // A long one, its folder removed, then the service restarted: nothing records it any more.
    const runs = [
      {
        ...job(['sleep', '30']),
        generation: 2,
        replicas: [{ ...job(['sleep', '30']).replicas[0]!, generation: 2 }],
      },
    ];
    const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    expect((await second.reconcile(runs)).map((r) => r.phase)).toEqual(['running']);
    const stray = JSON.parse(readFileSync(join(dataDir, 'jobs/1/2/0.pid'), 'utf8')).pid as number;
    dirs.track(stray);
    // Its command started (its group recorded): on a loaded machine the folder was otherwise removed
    // before the command's shell wrote there, which ended it at once (exit 2), not stopped.
    const group = join(dataDir, 'jobs/1/2/0.group');
    await until(() => existsSync(group));
    await second.close();
    rmSync(join(dataDir, 'jobs/1'), { recursive: true, force: true });
    const third = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    // The stray is stopped as the new instance starts, as any replica is (SIGTERM: time to checkpoint;
    // its supervisor records the stop), before it starts the replica again.
    await until(() => !processExists(stray));
    expect(JSON.parse(readFileSync(join(dataDir, 'jobs/1/2/0.exit'), 'utf8'))).toMatchObject({
      stopped: true,
    });
    expect((await third.reconcile(runs)).map((r) => r.phase)).toEqual(['running']);
    const restarted = JSON.parse(readFileSync(join(dataDir, 'jobs/1/2/0.pid'), 'utf8')).pid as number;
    dirs.track(restarted);
    expect(supervisorsOf(dataDir)).toEqual([restarted]);
    await third.close();
  });

  it('a replica running without its record that ignores SIGTERM gets its grace, then SIGKILL; its job starts nothing meanwhile', async () => {
    const dataDir = temp();
    const stubborn = [job(['sh', '-c', "trap '' TERM; echo started; sleep 30"])];
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    await first.reconcile(stubborn);
    const stray = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8')).pid as number;
    dirs.track(stray);
    const log = join(dataDir, 'jobs/1/1/0.log');
    // Its trap set before its folder goes (a 1 s wait, not checked, could end before the command ran).
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('started'));
    await first.close();
    rmSync(join(dataDir, 'jobs/1'), { recursive: true, force: true });
    const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    // Within its grace: the job's replica is not started beside it.
    expect(await second.reconcile(stubborn)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100));
    await second.reconcile(stubborn); // past the grace: SIGKILL
    const [started] = await settle(second, stubborn, (s) => s[0]?.phase === 'running');
    expect(started).toMatchObject({ phase: 'running' });
    expect(processExists(stray)).toBe(false);
    const restarted = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8')).pid as number;
    dirs.track(restarted);
    expect(supervisorsOf(dataDir)).toEqual([restarted]);
    await second.close();
  });

  it('still stops a replica whose records folder was removed from outside', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    await settle(executor, [job(['sleep', '30'])], (s) => s[0]?.phase === 'running');
    const { pid } = JSON.parse(readFileSync(join(dataDir, 'jobs/1/1/0.pid'), 'utf8'));
    dirs.track(pid);
    // Gone in one step (a rename), then deleted: the running supervisor keeps writing records by path,
    // and a delete in place raced it (ENOTEMPTY past 100 retries on a loaded CI machine).
    renameSync(join(dataDir, 'jobs'), join(dataDir, 'jobs-removed'));
    rmSync(join(dataDir, 'jobs-removed'), { recursive: true, force: true, maxRetries: 100, retryDelay: 10 });
    await settle(executor, [], (s) => s.length === 0);
    expect(processExists(pid)).toBe(false);
    await executor.close();
  });
});
