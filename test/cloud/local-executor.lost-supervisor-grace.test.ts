import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { readStop } from '../../src/cloud/local/executor-records.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';
import { lines, loggerPid, lostJob as job, loseSupervisor, termLogger, until } from './lost-supervisor.ts';

/**
 * A supervisor killed while boa was down leaves its command running: once its generation is replaced,
 * that command is stopped as any replica is (SIGTERM, the grace to checkpoint, then SIGKILL), not
 * SIGKILLed at once, also across a restart of boa mid-grace.
 */
const dirs = localExecutorDirs('boa-lost-grace-');
afterEach(() => dirs.cleanup());

/** Writes "term" to `file` for each SIGTERM (each one: a second must show) and runs on. */
const ignoresTerm = (dir: string, file: string) => termLogger(dir, file, 'term');

describe.runIf(existsSync('/proc/self/environ'))("local executor: a lost supervisor's command", () => {
  it('gets SIGTERM and time to checkpoint; the next generation starts once it is gone', async () => {
    const dataDir = dirs.temp();
    const marker = join(dataDir, 'checkpoint');
    const checkpoints = job(1, [
      'sh',
      '-c',
      `trap 'sleep 0.3; echo saved > "${marker}"; exit 0' TERM; while :; do sleep 0.1; done`,
    ]);
    const { group } = await loseSupervisor(dataDir, checkpoints, (g) => dirs.track(g));
    const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
    try {
      const next = job(2, ['sleep', '300']);
      const first = await boa.reconcile([next]);
      // Stopping, and its job starts nothing meanwhile: it must not run beside its next generation.
      expect(first).toEqual([expect.objectContaining({ generation: 1, phase: 'stopping' })]);
      await settle(boa, [next], (s) => s.length === 1 && s[0]?.generation === 2);
      expect(existsSync(marker) && readFileSync(marker, 'utf8')).toBe('saved\n');
      expect(groupMembers(group)).toEqual([]);
      await settle(boa, [], (s) => s.length === 0);
    } finally {
      await boa.close();
    }
  });

  it('that ignores SIGTERM is SIGKILLed once the grace is over, not before; the stranger holding its pid is never signalled', async () => {
    const dataDir = dirs.temp();
    const terms = join(dataDir, 'terms');
    const { group } = await loseSupervisor(dataDir, job(1, ignoresTerm(dataDir, terms)), (g) =>
      dirs.track(g),
    );
    await loggerPid(terms, 'term');
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    dirs.track(stranger.pid as number);
    const pidFile = join(dataDir, 'jobs/1/1/0.pid');
    writeFileSync(pidFile, JSON.stringify({ pid: stranger.pid, node: 'local-1', startedAt: 0 }));
    const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
    try {
      const next = job(2, ['sleep', '300']);
      const stoppedAt = performance.now();
      await boa.reconcile([next]);
      await until(() => lines(terms).length === 1);
      await new Promise((r) => setTimeout(r, 700));
      expect(groupMembers(group).length, 'SIGKILLed before its grace was over').toBeGreaterThan(0);
      expect((await boa.reconcile([next])).map((s) => [s.generation, s.phase])).toEqual([[1, 'stopping']]);
      await settle(boa, [next], (s) => s.length === 1 && s[0]?.generation === 2);
      expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(1900);
      expect(groupMembers(group)).toEqual([]);
      expect(lines(terms)).toEqual(['term']);
      expect(processExists(stranger.pid as number)).toBe(true);
      await settle(boa, [], (s) => s.length === 0);
    } finally {
      await boa.close();
    }
  });

  it('is still stopped by a boa restarted mid-grace, from the recorded deadline and without a second SIGTERM', async () => {
    const dataDir = dirs.temp();
    const terms = join(dataDir, 'terms');
    const { group } = await loseSupervisor(dataDir, job(1, ignoresTerm(dataDir, terms)), (g) =>
      dirs.track(g),
    );
    await loggerPid(terms, 'term');
    const next = job(2, ['sleep', '300']);
    const before = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
    await before.reconcile([next]);
    await until(() => lines(terms).length === 1);
    await before.close();
    expect(readStop(join(dataDir, 'jobs/1/1'), 0)).toMatchObject({ sent: true });
    // 29 of its 30 s were used while boa was down (the wall clock, all a restart has): about 1 s is left,
    // where a grace counted from zero would hold the next generation off for 30 s.
    const after = new LocalExecutor({
      dataDir,
      terminationGraceSeconds: 30,
      now: () => Date.now() + 29_000,
    });
    try {
      const restartedAt = performance.now();
      await settle(after, [next], (s) => s.length === 1 && s[0]?.generation === 2);
      expect(performance.now() - restartedAt).toBeLessThan(10_000);
      expect(groupMembers(group)).toEqual([]);
      expect(lines(terms)).toEqual(['term']);
      await settle(after, [], (s) => s.length === 0);
    } finally {
      await after.close();
    }
  });

  it('gets at adoption a SIGTERM recorded but never sent (boa killed in between), once however often boa restarts', async () => {
    const dataDir = dirs.temp();
    const terms = join(dataDir, 'terms');
    await loseSupervisor(dataDir, job(1, ignoresTerm(dataDir, terms)), (g) => dirs.track(g));
    await loggerPid(terms, 'term');
    writeFileSync(join(dataDir, 'jobs/1/1/0.stop'), JSON.stringify({ at: Date.now() }));
    await restartThrice(dataDir, terms);
  });

  it('with its supervisor alive, gets at adoption a SIGTERM recorded but never sent, once however often boa restarts', async () => {
    const dataDir = dirs.temp();
    const terms = join(dataDir, 'terms');
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
    await settle(first, [job(1, ignoresTerm(dataDir, terms))], (s) => s[0]?.phase === 'running');
    await loggerPid(terms, 'term');
    await first.close();
    writeFileSync(join(dataDir, 'jobs/1/1/0.stop'), JSON.stringify({ at: Date.now() }));
    await restartThrice(dataDir, terms);
  });

  it('behind a shell that did not exec it, gets the SIGTERM once the shell died of it, once across restarts mid-grace', async () => {
    const dataDir = dirs.temp();
    const terms = join(dataDir, 'terms');
    const command = ['sh', '-c', '"$0" "$1" "$2" "$3"; echo "ended $?"', ...ignoresTerm(dataDir, terms)];
    const { group } = await loseSupervisor(dataDir, job(1, command), (g) => dirs.track(g));
    await loggerPid(terms, 'term');
    const next = job(2, ['sleep', '300']);
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
    await first.reconcile([next]);
    await first.close();
    // The shell, the group's leader, got it and died of it; its command runs on, orphaned, owed its own.
    await until(() => !groupMembers(group).includes(group));
    expect(lines(terms)).toEqual([]);
    expect(readStop(join(dataDir, 'jobs/1/1'), 0)).toMatchObject({ sent: true, leaders: [group] });
    for (let i = 0; i < 3; i++) {
      const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
      await boa.reconcile([next]);
      await new Promise((r) => setTimeout(r, 300));
      await boa.close();
    }
    // Its handler writes the line once it runs: on a loaded machine that can be after the restarts.
    await until(() => lines(terms).length >= 1);
    expect(lines(terms)).toEqual(['term']);
    expect(readStop(join(dataDir, 'jobs/1/1'), 0)).toEqual({ at: expect.any(Number), sent: true });
  });
});

/** Three boas started one after another (each its adoption): the stop's SIGTERM reaches the command once. */
async function restartThrice(dataDir: string, terms: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
    await until(() => lines(terms).length >= 1);
    await boa.reconcile([job(2, ['sleep', '300'])]);
    await new Promise((r) => setTimeout(r, 300));
    await boa.close();
  }
  expect(lines(terms)).toEqual(['term']);
  expect(readStop(join(dataDir, 'jobs/1/1'), 0)).toMatchObject({ sent: true });
}
