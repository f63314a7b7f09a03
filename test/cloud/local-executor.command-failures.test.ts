/** Commands that cannot run (127, 126, a bad working directory), reported by name; the check at submission. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { checkLocalWorkload } from '../../src/cloud/local/executor-command.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { job } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';
import type { DesiredJob } from '../../src/service/ports.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

describe('local executor', () => {
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
