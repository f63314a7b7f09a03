/** Pids and groups that are no longer a replica's: never adopted or signalled; old supervisors' leftovers. */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { isOurSupervisor, processExists } from '../../src/cloud/local/replica-processes.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { cmdlineOf, job, supervisorsOf, until } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';
import { pidFrom } from './pid-file.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

/**
 * A process that passes for the supervisor of replica <dir>/0 (its command line is one's), running
 * `script`, with the pid record a restarted service adopts it from; killed after the test.
 */
function fakeSupervisor(dir: string, script: string): number {
  mkdirSync(dir, { recursive: true });
  const proc = spawn('/bin/sh', ['-c', script, '/x/replica-supervisor.sh', dir, '0'], {
    detached: true,
    stdio: 'ignore',
  });
  dirs.track(proc.pid as number);
  writeFileSync(join(dir, '0.pid'), JSON.stringify({ pid: proc.pid, node: 'local-1', startedAt: 0 }));
  return proc.pid as number;
}

describe('local executor', () => {
  it('never adopts or signals a recycled pid: the replica is reported gone, its job to resume', async () => {
    const dataDir = temp();
    // A live process that is not a supervisor holds the recorded pid.
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    dirs.track(stranger.pid as number);
    mkdirSync(join(dataDir, 'jobs/1/1'), { recursive: true });
    writeFileSync(
      join(dataDir, 'jobs/1/1/0.pid'),
      JSON.stringify({ pid: stranger.pid, node: 'local-1', startedAt: 0 }),
    );
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [status] = await executor.reconcile([job(['sleep', '30'])]);
    expect(status).toMatchObject({ phase: 'failed', interrupted: true });
    // Its process group is not ours: a stop of the generation signals nothing.
    await settle(executor, [], (s) => s.length === 0);
    expect(processExists(stranger.pid as number)).toBe(true);
    expect(supervisorsOf(dataDir)).toEqual([]);
  });

  it('takes an adopted replica for ended once its exit is recorded or its pid runs something else, and signals no stranger', async () => {
    const dataDir = temp();
    // Two adopted "supervisors" (their command lines are a supervisor's for their records), as a
    // restarted service finds them, whose pids then turn into another program (exec: the same pid, a
    // stranger, as a pid reused between two looks): one after recording its exit, one without.
    const fake = (jobId: number, script: string) => {
      const dir = join(dataDir, `jobs/${jobId}/1`);
      return { dir, pid: fakeSupervisor(dir, script) };
    };
    const go = join(dataDir, 'go');
    const becomeStranger = `while [ ! -e ${go} ]; do sleep 0.05; done; exec sleep 30`;
    const recorded = fake(1, becomeStranger);
    const reused = fake(2, becomeStranger);
    // Both exec'd (until then a spawned child has node's command line; a fixed 200 ms may not do).
    for (const { pid } of [recorded, reused])
      await until(() => cmdlineOf(pid).includes('replica-supervisor'));
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const wanted = [1, 2].map((jobId) => {
      const one = job(['sleep', '30']);
      return { ...one, jobId, replicas: [{ ...one.replicas[0]!, jobId }] };
    });
    const before = await executor.reconcile(wanted);
    expect(before.map((s) => s.phase)).toEqual(['running', 'running']);
    writeFileSync(
      join(recorded.dir, '0.exit'),
      JSON.stringify({ code: 0, signal: null, reason: 'exited 0', stopped: false, at: Date.now() }),
    );
    writeFileSync(go, '');
    for (const { pid } of [recorded, reused])
      await until(() => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('replica-supervisor'));
    const after = await executor.reconcile(wanted);
    expect(after.find((s) => s.jobId === 1)).toMatchObject({ phase: 'succeeded', exitCode: 0 });
    expect(after.find((s) => s.jobId === 2)).toMatchObject({ phase: 'failed', interrupted: true });
    // Neither stranger is signalled when the generations are no longer wanted.
    await settle(executor, [], (s) => s.length === 0);
    expect(processExists(recorded.pid)).toBe(true);
    expect(processExists(reused.pid)).toBe(true);
  });

  it("ends what an older boa's supervisor left of its command when it ended (it did not end the command's group)", async () => {
    const dataDir = temp();
    const dir = join(dataDir, 'jobs/1/1');
    // An old supervisor: the command's helper in its own group, an exit record, then gone, the helper left.
    const go = join(dataDir, 'go');
    const exit = JSON.stringify({
      code: 0,
      signal: null,
      reason: 'exited 0',
      stopped: false,
      at: Date.now(),
    });
    fakeSupervisor(
      dir,
      `sleep 30 & echo $! > ${dir}/helper; while [ ! -e ${go} ]; do sleep 0.05; done; printf '%s' '${exit}' > ${dir}/0.exit; exit 0`,
    );
    const helper = await pidFrom(join(dir, 'helper'));
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [running] = await executor.reconcile([job(['sleep', '30'])]);
    expect(running?.phase).toBe('running');
    writeFileSync(go, '');
    await settle(executor, [job(['sleep', '30'])], (s) => s[0]?.phase === 'succeeded');
    await settle(executor, [], (s) => s.length === 0);
    await until(() => !processExists(helper));
  });

  it('sends again at adoption a stop that was recorded but may never have been sent (killed in between)', async () => {
    const dataDir = temp();
    const dir = join(dataDir, 'jobs/1/1');
    // Its trap set before boa looks (a SIGTERM before it ended the shell, nothing written).
    fakeSupervisor(
      dir,
      `trap 'echo got > ${dir}/term; exit 0' TERM; : > ${dir}/ready; while :; do sleep 0.05; done`,
    );
    writeFileSync(join(dir, '0.stop'), JSON.stringify({ at: Date.now() }));
    await until(() => existsSync(join(dir, 'ready')));
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
    await until(() => existsSync(join(dir, 'term')));
    await executor.close();
  });

  it("never SIGKILLs a stranger's process group that a stale group record names", async () => {
    const dataDir = temp();
    // A supervisor gone (its pid free) and a group record whose id now leads a stranger's group.
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    dirs.track(stranger.pid as number);
    const dead = spawn('true');
    await new Promise((r) => dead.on('exit', r));
    mkdirSync(join(dataDir, 'jobs/1/1'), { recursive: true });
    writeFileSync(
      join(dataDir, 'jobs/1/1/0.pid'),
      JSON.stringify({ pid: dead.pid, node: 'local-1', startedAt: 0 }),
    );
    writeFileSync(join(dataDir, 'jobs/1/1/0.group'), String(stranger.pid));
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    await settle(executor, [], (s) => s.length === 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(processExists(stranger.pid as number)).toBe(true);
  });

  it("takes a live process for a record's supervisor only with that record's folder and rank", async () => {
    const dataDir = temp();
    const dir = join(dataDir, 'jobs/1/10');
    // The argv a supervisor of job 1, generation 10, rank 0 has (/bin/sh <script> <dir> <rank> ...).
    const look = spawn('/bin/sh', ['-c', 'sleep 30', '/x/replica-supervisor.sh', dir, '0'], {
      detached: true,
      stdio: 'ignore',
    });
    dirs.track(look.pid as number);
    await until(() => cmdlineOf(look.pid as number).includes('replica-supervisor'));
    expect(isOurSupervisor(look.pid as number, dir, 0)).toBe(true);
    // jobs/1/1 is a prefix of jobs/1/10, and rank 1 is another replica: neither is this process.
    expect(isOurSupervisor(look.pid as number, join(dataDir, 'jobs/1/1'), 0)).toBe(false);
    expect(isOurSupervisor(look.pid as number, dir, 1)).toBe(false);
  });
});
