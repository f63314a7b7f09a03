import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { MAYBE_LOST_LINE } from '../../src/cloud/local/log-cap.ts';
import { SPAWN_ATTEMPTS, SPAWN_FAILED_EXIT } from '../../src/cloud/local/spawn-failures.ts';
import { ReplicaLauncher } from '../../src/cloud/local/launcher.ts';
import { checkLocalWorkload } from '../../src/cloud/local/executor-command.ts';
import { readLogTail } from '../../src/cloud/local/log-tail.ts';
import { isOurSupervisor, processExists } from '../../src/cloud/local/replica-processes.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { pidFrom } from './pid-file.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';

const CLIENT = join(import.meta.dirname, '../../clients/node/boa-job.mjs');

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

const job = (command: string[]): DesiredJob => ({
  jobId: 1,
  generation: 1,
  replicas: [{ jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

/** Reconciles until `done` holds; 20 s at least (returns as soon as it holds: a loaded machine needs it). */
async function settle(
  executor: LocalExecutor,
  desired: DesiredJob[],
  done: (s: readonly ReplicaStatus[]) => boolean,
) {
  for (let i = 0; i < 400; i++) {
    const statuses = await executor.reconcile(desired);
    if (done(statuses)) return statuses;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

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

/** Waits up to 20 s (spawns on a loaded machine take seconds; a wait that holds early costs nothing). */
/** A process's command line ('' once it is gone): a spawned child has its parent's until it execs. */
const cmdlineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

async function until(condition: () => boolean) {
  for (let i = 0; i < 800 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

/**
 * The replica supervisors running for this data dir. A supervisor's shell forks before it execs the
 * command, and the fork carries the same command line until then: only supervisors whose parent is not
 * one of them count (under load the fork was caught as a second supervisor).
 */
function supervisorsOf(dataDir: string): number[] {
  const all = supervisorProcesses(dataDir);
  return all.filter((pid) => {
    try {
      return !all.includes(parentOf(pid));
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** Live supervisor processes of this data dir's replica (by their command line in /proc). */
function supervisorProcesses(dataDir: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (commandLine.includes('replica-supervisor.sh') && commandLine.includes(dataDir))
        out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

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

  it("keeps the service's own boa and launcher variables from the job; boa's own replica env still reaches it", async () => {
    const dataDir = temp();
    // Its secrets too: its cloud credentials, anything named a secret, password or token.
    const planted = {
      RANK: '7',
      TORCHELASTIC_RUN_ID: 'stale',
      BOA_X: 'secret',
      AWS_SECRET_ACCESS_KEY: 'x',
      DB_PASSWORD: 'x',
      HF_TOKEN: 'x',
      TOKENIZERS_PARALLELISM: 'false',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    try {
      const out = join(dataDir, 'env.txt');
      const base = job([
        'sh',
        '-c',
        `echo "\${RANK-unset} \${TORCHELASTIC_RUN_ID-unset} \${BOA_X-unset} \${AWS_SECRET_ACCESS_KEY-unset} \${DB_PASSWORD-unset} \${HF_TOKEN-unset} \${TOKENIZERS_PARALLELISM-unset} $WORLD_SIZE \${HOME:+home}" > ${out}`,
      ]);
      const desired: DesiredJob = {
        ...base,
        replicas: base.replicas.map((r) => ({ ...r, env: { WORLD_SIZE: '4' } })),
      };
      await settle(executor, [desired], (s) => s[0]?.phase === 'succeeded' || s[0]?.phase === 'failed');
      // Not a secret by its name (TOKENIZERS_...): kept.
      expect(readFileSync(out, 'utf8')).toBe('unset unset unset unset unset unset false 4 home\n');
      // Owner only, whatever the data dir's mode: logs often hold credentials.
      expect(statSync(join(dataDir, 'jobs/1/1')).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'jobs/1')).mode & 0o777).toBe(0o700);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await executor.close();
    }
  });

  it("records the exit of a job whose PATH lacks the supervisor's tools, and runs its command on that PATH", async () => {
    const dataDir = temp();
    // A job's PATH of only its own bin folder (a virtualenv's, say): no date, mv or sed there.
    const bin = join(dataDir, 'venv-bin');
    mkdirSync(bin);
    const out = join(dataDir, 'path.txt');
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    try {
      const base = job(['/bin/sh', '-c', `echo "$PATH" > ${out}`]);
      const desired: DesiredJob = {
        ...base,
        replicas: base.replicas.map((r) => ({ ...r, workload: { ...r.workload, env: { PATH: bin } } })),
      };
      const [status] = await settle(
        executor,
        [desired],
        (s) => s[0]?.phase === 'succeeded' || s[0]?.phase === 'failed',
      );
      expect(status).toMatchObject({ phase: 'succeeded', exitCode: 0 });
      expect(readFileSync(out, 'utf8')).toBe(`${bin}\n`);
    } finally {
      await executor.close();
    }
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

  it("runs the command in a process group of its own: a job's `kill 0` does not reach its supervisor", async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    // A common cleanup idiom: on exit, signal the whole process group. The job ends by its own SIGTERM
    // (143), a failure of its own, not a stop from outside that would be resumed for free.
    const [status] = await settle(
      executor,
      [job(['sh', '-c', 'trap "kill 0" EXIT; sleep 0.3; echo finished'])],
      (s) => s[0]?.phase === 'failed' || s[0]?.phase === 'succeeded',
    );
    expect(status).toMatchObject({ phase: 'failed', exitCode: 143 });
    expect(status?.interrupted).toBeUndefined();
    expect(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8')).toContain('finished');
    await executor.close();
  });

  /** A trainer on boa's Node client: on a SIGTERM it stops with `exitCode`, after `pkill` of its group. */
  async function stoppedFromOutside(exitCode: number): Promise<ReplicaStatus | undefined> {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const trainer =
      `import { BoaJob } from ${JSON.stringify(CLIENT)};` +
      "const job = new BoaJob({ url: 'http://127.0.0.1:9', jobId: 1, token: 't' });" +
      // Asked before it says it trains: until a program asks, the client leaves SIGTERM its default.
      'job.shouldStop();' +
      "console.log('training');" +
      `setInterval(() => { if (job.shouldStop()) process.exit(${exitCode}); }, 20);`;
    const desired = [job([process.execPath, '--input-type=module', '-e', trainer])];
    const log = join(dataDir, 'jobs/1/1/0.log');
    await settle(executor, desired, () => {
      try {
        return readFileSync(log, 'utf8').includes('training');
      } catch {
        return false;
      }
    });
    // `pkill node`, a kill of the command's group: the supervisor gets nothing.
    process.kill(-Number(readFileSync(join(dataDir, 'jobs/1/1/0.group'), 'utf8')), 'SIGTERM');
    const [status] = await settle(executor, desired, (s) => s[0]?.phase !== 'running');
    await executor.close();
    return status;
  }

  it('reports a job whose client answered a SIGTERM sent to its command alone by exiting 0 as interrupted, not done', async () => {
    const status = await stoppedFromOutside(0);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 0, interrupted: true });
    expect(status?.reason).toMatch(/after a SIGTERM boa did not send/);
  });

  it('still reports a job that exits 1 after such a SIGTERM as failed (a torchrun agent ending its workers after a crash)', async () => {
    const status = await stoppedFromOutside(1);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 1 });
    expect(status?.interrupted).toBeUndefined();
  });

  it("bounds a replica's log: past its cap the log's last part is kept as <rank>.log.1 and the log starts again", async () => {
    const dataDir = temp();
    const logCap = { capBytes: 200_000, keepBytes: 50_000, checkMs: 20 };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, logCap });
    // 4 MB in 100-byte numbered lines, a little at a time, then quiet.
    const printer =
      'let i = 0; const t = setInterval(() => { for (let k = 0; k < 400; k++) process.stdout.write(String(i++).padStart(99, "x") + "\\n");' +
      ' if (i >= 40000) { clearInterval(t); setTimeout(() => console.log("done printing"), 300); setTimeout(() => {}, 30000); } }, 5);';
    const desired = [job([process.execPath, '-e', printer])];
    const log = join(dataDir, 'jobs/1/1/0.log');
    // In either file: under load a last cut can come after the line and move it into 0.log.1 (a review
    // saw this wait time out).
    const printed = (file: string) => {
      try {
        return readFileSync(file, 'utf8').includes('done printing');
      } catch {
        return false;
      }
    };
    await settle(executor, desired, () => printed(log) || printed(`${log}.1`));
    const kept = readFileSync(`${log}.1`, 'utf8');
    // The last 50 KB before the cut, what the job wrote during it, and the notice on its own line.
    expect(kept.length).toBeGreaterThan(50_000);
    expect(kept).toMatch(
      /\nboa: this log passed 0\.19 MiB and was cut here: the 0\.05 MiB above are kept in 0\.log\.1, what follows is in 0\.log\n$/,
    );
    // The log holds at most its cap plus what comes in between two checks, never the 4 MB written.
    const now = readFileSync(log, 'utf8');
    expect(now.length).toBeLessThan(logCap.capBytes + 400_000);
    // What is kept is the end of the output: numbered lines, in order, none lost on either side of the
    // last cut. At the cut itself what lands in its last instant is lost (log-cap.ts): said, or, from a
    // job quiet for 50 ms and paused again right after (CI's load did it), the few lines of that instant.
    const numbered = (text: string) =>
      text
        .split('\n')
        .filter((line) => /^x+\d+$/.test(line))
        .map((line) => Number(line.replace(/x/g, '')));
    const inOrder = (list: number[]) => list.every((n, k) => k === 0 || n === (list[k - 1] as number) + 1);
    const before = numbered(kept);
    const after = numbered(now);
    expect(inOrder(before), 'no line lost before the cut').toBe(true);
    expect(inOrder(after), 'no line lost after it').toBe(true);
    // The last cut can come once the job printed them all: nothing numbered after it.
    const lostAtCut = (after[0] ?? 40_000) - (before.at(-1) as number) - 1;
    expect(lostAtCut).toBeGreaterThanOrEqual(0);
    if (!kept.includes(MAYBE_LOST_LINE)) expect(lostAtCut, 'lines lost at the cut, unsaid').toBeLessThan(10);
    expect(after.at(-1) ?? 39_999).toBe(39_999);
    await settle(executor, [], (s) => s.length === 0);
    await executor.close();
  });

  it("reads a log's last lines from its end; one long line (progress bars redrawn with \\r) is still shown", () => {
    const dir = temp();
    const file = join(dir, '0.log');
    writeFileSync(file, 'a\nb\nc\n');
    expect(readLogTail(file, 2)).toBe('b\nc\n');
    expect(readLogTail(file, 10)).toBe('a\nb\nc\n');
    expect(readLogTail(join(dir, 'none.log'), 2)).toBeUndefined();
    // Longer than the MiB read: the cut first line is dropped, unless it is the only one.
    writeFileSync(file, `${'x'.repeat(2 << 20)}\nlast\n`);
    expect(readLogTail(file, 5)).toBe('last\n');
    writeFileSync(file, 'epoch 1: 10%\r'.repeat(200_000));
    expect(readLogTail(file, 5)?.endsWith('epoch 1: 10%\r')).toBe(true);
  });

  it('starts the command with HUP, INT and QUIT at their defaults (a background command of sh starts with them ignored)', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    await settle(
      executor,
      [job(['grep', 'SigIgn', '/proc/self/status'])],
      (s) => s[0]?.phase === 'succeeded',
    );
    const ignored = /SigIgn:\s*([0-9a-f]+)/.exec(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8'))?.[1];
    expect(ignored).toBeDefined();
    // Bits 1-3: SIGHUP, SIGINT, SIGQUIT.
    expect(Number.parseInt(ignored!, 16) & 0b111).toBe(0);
  });

  it('reports a command that cannot be found as failed with 127, the log saying why', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [status] = await settle(executor, [job(['no-such-program-boa'])], (s) => s[0]?.phase === 'failed');
    expect(status).toMatchObject({ exitCode: 127, reason: 'command not found: no-such-program-boa' });
    // boa's own look-up: retried, as the program may come back (a virtualenv being rebuilt).
    expect(status?.notRestartable).toBeUndefined();
    expect(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8')).toContain('no-such-program-boa');
  });

  it("names boa's program only when boa's exec of it fails: a 127 or 126 of the command's own (sh -c 'exec torchrun ...' without torchrun) points at its output", async () => {
    // Found in a trial: `-- sh -c 'exec torchrun ...'` was reported "command not found: sh".
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [status] = await settle(
      executor,
      [job(['sh', '-c', 'exec no-such-program-boa --nnodes=1'])],
      (s) => s[0]?.phase === 'failed',
    );
    expect(status).toMatchObject({
      exitCode: 127,
      reason: "exited 127 (command not found? the job's output says which)",
      // The command's own: it fails the same way at every start, so it is not restarted.
      notRestartable: expect.stringMatching(
        /^not restarted: exit 127 means a command the job ran was not found, .* the PATH on this machine \(the job's PATH/,
      ),
    });
    expect(readFileSync(join(dataDir, 'jobs/1/1/0.log'), 'utf8')).toMatch(/no-such-program-boa: not found/);
    await settle(executor, [], (s) => s.length === 0);

    const second = { ...job(['sh', '-c', 'exit 126']), jobId: 2 };
    second.replicas = second.replicas.map((r) => ({ ...r, jobId: 2 }));
    const [own126] = await settle(executor, [second], (s) => s[0]?.phase === 'failed');
    expect(own126).toMatchObject({
      exitCode: 126,
      reason: "exited 126 (a command not executable? the job's output says which)",
      notRestartable: expect.stringMatching(/^not restarted: exit 126 /),
    });
    await settle(executor, [], (s) => s.length === 0);
    await executor.close();
  });

  it("reports boa's program, given as a path, as not found (127) or not executable (126) by name, without running it", async () => {
    const dataDir = temp();
    const workingDir = temp();
    writeFileSync(join(workingDir, 'train.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const inDir = (jobId: number, command: string[]): DesiredJob => ({
      jobId,
      generation: 1,
      replicas: job(command).replicas.map((r) => ({ ...r, jobId, workload: { command, workingDir } })),
    });
    const statuses = await settle(
      executor,
      [inDir(1, ['./gone.sh']), inDir(2, ['./train.sh'])],
      (s) => s.length === 2 && s.every((r) => r.phase === 'failed'),
    );
    expect(statuses.find((s) => s.jobId === 1)).toMatchObject({
      exitCode: 127,
      reason: 'command not found: ./gone.sh',
    });
    expect(statuses.find((s) => s.jobId === 2)).toMatchObject({
      exitCode: 126,
      reason: 'command not executable: ./train.sh',
    });
    expect(statuses.every((s) => s.notRestartable === undefined)).toBe(true);
    expect(readFileSync(join(dataDir, 'jobs/2/1/0.log'), 'utf8')).toContain(
      'boa: command not executable: ./train.sh',
    );
    await settle(executor, [], (s) => s.length === 0);
    await executor.close();
  });

  it('records the exit of a replica whose working directory or command has control characters (else it read as a kill from outside)', async () => {
    const dataDir = temp();
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const base = job(['no-such\u0001program']);
    const desired: DesiredJob = {
      ...base,
      replicas: base.replicas.map((r) => ({
        ...r,
        workload: { ...r.workload, workingDir: join(dataDir, 'gone\ndir\tx') },
      })),
    };
    const [status] = await settle(executor, [desired], (s) => s[0]?.phase === 'failed');
    expect(status).toMatchObject({
      exitCode: 126,
      reason: `cannot enter the working directory ${dataDir}/gonedirx`,
    });
    expect(status?.interrupted).toBeUndefined();
    expect(status?.notRestartable).toBeUndefined();
  });

  it('retries a replica whose start fails, and after a few failures in a row reports it failed, so its job is counted and not left holding GPUs', async () => {
    const dataDir = temp();
    const errors = ['spawn EMFILE', 'spawn EAGAIN', 'spawn EAGAIN', 'spawn EAGAIN'];
    let calls = 0;
    const failing = {
      launch: async () => errors[calls++] ?? 'spawn EAGAIN',
      close: async () => undefined,
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: failing });
    const desired = [job(['sleep', '30'])];
    for (let attempt = 1; attempt < SPAWN_ATTEMPTS; attempt++) {
      expect(await executor.reconcile(desired)).toEqual([]);
    }
    const [failed] = await executor.reconcile(desired);
    expect(failed).toMatchObject({
      phase: 'failed',
      exitCode: SPAWN_FAILED_EXIT,
      reason: `could not be started (${SPAWN_ATTEMPTS} attempts): spawn EAGAIN`,
    });
    // Reported, not retried, until its generation leaves: the job's restart is a new generation.
    expect(await executor.reconcile(desired)).toEqual([failed]);
    expect(calls).toBe(SPAWN_ATTEMPTS);
    const next: DesiredJob = {
      ...desired[0]!,
      generation: 2,
      replicas: [{ ...desired[0]!.replicas[0]!, generation: 2 }],
    };
    expect(await executor.reconcile([next])).toEqual([]);
    expect(calls).toBe(SPAWN_ATTEMPTS + 1);
  });

  it('tracks a replica whose pid record cannot be written (a full disk): started once, its record written when it can be', async () => {
    const dataDir = temp();
    const record = join(dataDir, 'jobs/1/1/0.pid');
    let launches = 0;
    const unrecordable = {
      // The replica starts, but its record's place is taken (as a full disk refuses the write).
      launch: async () => {
        launches += 1;
        mkdirSync(record, { recursive: true });
        const proc = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
        dirs.track(proc.pid as number);
        return { pid: proc.pid as number, exited: false, orphaned: false };
      },
      close: async () => undefined,
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: unrecordable });
    const desired = [job(['sleep', '30'])];
    for (let pass = 0; pass < 3; pass++) {
      const [status] = await executor.reconcile(desired);
      expect(status).toMatchObject({ phase: 'running' });
    }
    expect(launches).toBe(1);
    rmSync(record, { recursive: true });
    await executor.reconcile(desired);
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({
      pid: dirs.pids.at(-1),
      node: 'local-1',
    });
  });

  it('keeps the record of a rank that finished on its own until a pass has reported it: a restart in between reports it again', async () => {
    const dataDir = temp();
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const done = job([process.execPath, '-e', 'process.exit(0)']);
    await settle(first, [done], (s) => s.some((r) => r.phase === 'succeeded'));
    // Rescaled as it finished: generation 2 is wanted, generation 1's rank 0 said once more.
    const next: DesiredJob = { jobId: 1, generation: 2, replicas: [] };
    const said = await first.reconcile([next]);
    expect(said).toEqual([expect.objectContaining({ generation: 1, rank: 0, phase: 'succeeded' })]);
    // The service stops before it reads that pass's statuses: the next start hears it again.
    await first.close();
    const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    expect(await second.reconcile([next])).toEqual([
      expect.objectContaining({ generation: 1, rank: 0, phase: 'succeeded' }),
    ]);
    // Once returned, it is forgotten at the pass after.
    expect(await second.reconcile([next])).toEqual([]);
    await second.close();
  });

  it('retries a start that failed at the next reconcile, which runs it', async () => {
    const dataDir = temp();
    let failedOnce = false;
    const launcher = new ReplicaLauncher();
    const flaky = {
      launch: (...args: Parameters<typeof launcher.launch>) => {
        if (!failedOnce) {
          failedOnce = true;
          // The launcher's own error: nothing was spawned (a lost answer waits: local-supervisor-pid-record.test.ts).
          return Promise.resolve('spawn EAGAIN');
        }
        return launcher.launch(...args);
      },
      close: () => launcher.close(),
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: flaky });
    const desired = [job(['sleep', '30'])];
    expect(await executor.reconcile(desired)).toEqual([]);
    const [status] = await executor.reconcile(desired);
    expect(status).toMatchObject({ phase: 'running' });
    await settle(executor, [], (s) => s.length === 0);
    await executor.close();
  });

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

  it('checks at submission that the program exists: PATH, a path, the working directory', () => {
    const dir = temp();
    writeFileSync(join(dir, 'train.sh'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(dir, 'data.txt'), 'not a program', { mode: 0o644 });
    expect(checkLocalWorkload({ command: ['node', '-e', '0'] })).toBeUndefined();
    expect(checkLocalWorkload({ command: ['./train.sh'], workingDir: dir })).toBeUndefined();
    expect(checkLocalWorkload({ command: ['./data.txt'], workingDir: dir })?.field).toBe('workload.command');
    // The likely fixes said: a script without its execute bit is run with its interpreter...
    expect(checkLocalWorkload({ command: ['./data.txt'], workingDir: dir })?.message).toContain(
      'it is a file without the execute bit: run it with its interpreter (-- node ./data.txt, -- python3 ./data.txt) or chmod +x it',
    );
    // ...and a whole command line in one word is no shell's.
    expect(checkLocalWorkload({ command: ['python3 train.py'] })?.message).toContain(
      'the command runs without a shell: give its words apart (-- python3 train.py), or -- sh -c "..."',
    );
    expect(checkLocalWorkload({ command: ['python3 x/train.py'] })?.message).toMatch(
      /^python3 x\/train.py is not an executable file .*without a shell/,
    );
    expect(checkLocalWorkload({ command: ['no-such-program-boa'] })).toMatchObject({
      field: 'workload.command',
      message: expect.stringContaining('command not found'),
    });
    // A long PATH is shortened in the message; one given with --env is listed as given.
    const path = Array.from({ length: 12 }, (_, i) => `/p${i}`).join(':');
    const long = checkLocalWorkload({ command: ['no-such-program-boa'], env: { PATH: path } });
    expect(long?.message).toContain(
      `is not an executable on the job's PATH (from --env: /p0:/p1:/p2:/p3:/p4:/p5:... 6 more folders)`,
    );
    expect(long?.message).toContain('give its full path, or set PATH with --env');
    // The service's, under npm start: the job inherits it whole, and npm's folders are counted, not
    // listed as this machine's.
    const npm = [
      '/home/me/boa/node_modules/.bin',
      '/home/me/node_modules/.bin',
      '/node_modules/.bin',
      '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin',
      '/usr/local/bin:/usr/bin:/bin',
    ].join(':');
    expect(checkLocalWorkload({ command: ['no-such-program-boa'] }, { PATH: npm })?.message).toBe(
      'command not found: "no-such-program-boa" is not an executable on the job\'s PATH (the service\'s, which' +
        ' the job inherits: /usr/local/bin:/usr/bin:/bin; not listed: the 4 folders npm put before them' +
        ' (node_modules/.bin), which the job inherits too); give its full path, or set PATH with --env',
    );
    expect(
      checkLocalWorkload({ command: ['no-such-program-boa'] }, { PATH: '/usr/bin:/bin' })?.message,
    ).toContain("(the service's, which the job inherits: /usr/bin:/bin)");
    expect(checkLocalWorkload({ command: ['node'], workingDir: join(dir, 'missing') })?.field).toBe(
      'workload.workingDir',
    );
  });
});
