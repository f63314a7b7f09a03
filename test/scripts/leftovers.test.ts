/**
 * Problems earlier failure-mode reviews of the simulator scripts found and left (input-review.test.ts has
 * the rest): a kill while an output is written leaves no `.tmp-PID` file; simulate, frontier, gen-trace,
 * stage-profiles and profiles refuse an --out they cannot write before the run, not at its end; profiles stops quietly when its reader does;
 * frontier names the classes there are when given one there is not.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { POLLUX, REPO, runScript } from '../helpers/run-script.ts';

const dir = mkdtempSync(join(tmpdir(), 'boa-scripts-leftovers-'));
const unmount: string[] = [];
afterAll(() => {
  for (const volume of unmount) spawnSync('umount', [volume]);
  rmSync(dir, { recursive: true, force: true });
});

const script = (name: string) => join(REPO, 'scripts', name);

describe('a kill while an output file is written', () => {
  // Found in review: SIGINT or SIGTERM's default action ended the process mid-write, and the staged
  // `<out>.tmp-PID` stayed beside the output. gen-trace's 41 MB trace gives the write a window to kill in.
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s: no staged file is left, and the output is whole or absent',
    async (signal) => {
      const folder = mkdtempSync(join(dir, 'kill-'));
      const out = join(folder, 'trace.csv');
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          script('gen-trace.ts'),
          ...['--jobs', '1000000', '--hours', '1000', '--mix', 'cifar10:100', '--out', out],
        ],
        { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<{ code: number | null; killedBy: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, killedBy) => resolve({ code, killedBy })),
      );
      // Killed the moment the staged file appears: the write is under way.
      const watcher = watch(folder, (_event, name) => {
        if (name?.includes('.tmp-')) child.kill(signal);
      });
      const { code, killedBy } = await exited;
      watcher.close();

      // Ended by the signal once the write under way was done (gen-trace then says what it wrote); or, the
      // write being gen-trace's last step, it ends as it would have (exit 0) before Node runs the handler:
      // the loop has nothing left to wait for (seen in CI, and on a quiet machine with this 41 MB write).
      expect(killedBy === signal || code === 0, `exit ${code}, signal ${killedBy}`).toBe(true);
      expect(stderr).toMatch(/^(wrote .*: 1000000 jobs arriving over 1000 h\n)?$/);
      const left = readdirSync(folder);
      expect(left.filter((name) => name.includes('.tmp-'))).toEqual([]);
      if (left.includes('trace.csv')) {
        const text = readFileSync(out, 'utf8');
        expect([text.endsWith('\n'), text.split('\n').length]).toEqual([true, 1_000_002]);
      }
    },
    180_000,
  );
});

/** A folder on a read-only file system (a read-only tmpfs as root, whom modes do not stop; else mode 555). */
function readOnlyFolder(): string {
  const folder = mkdtempSync(join(dir, 'read-only-'));
  if (process.getuid?.() === 0) {
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', folder]).status).toBe(0);
    unmount.push(folder);
  } else {
    chmodSync(folder, 0o555);
  }
  return folder;
}

/** `script` with `args`, killed after a minute: a run that starts takes longer (the inputs below). */
function refusedWithinAMinute(name: string, args: readonly string[], nodeFlags: readonly string[] = []) {
  const run = spawnSync(process.execPath, [...nodeFlags, '--import', 'tsx', script(name), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('an --out that cannot be written', () => {
  // Found in review: checked only when the result was written, after the whole run (minutes).
  const longTrace = join(dir, 'long.csv');
  const rows = Array.from({ length: 20_000 }, (_, i) => `j${i},${i * 18},cifar10,1,128`);
  writeFileSync(longTrace, `name,time,application,num_replicas,batch_size\n${rows.join('\n')}\n`);
  // Each runs for minutes once started (simulate over 90 s, frontier over 2 min, on this machine).
  const runs = {
    simulate: ['simulate.ts', ['--trace', longTrace, '--policy', 'boa', '--budget', '1.2x', '--quiet']],
    frontier: [
      'frontier.ts',
      [
        '--trace',
        join(POLLUX, 'workloads/workload-1.csv'),
        '--solver',
        'paper',
        '--budgets',
        '101:500:0.04',
        '--quiet',
      ],
    ],
  } as const;
  const outs = {
    'in a missing folder': () => ({
      out: join(dir, 'missing', 'out.json'),
      why: 'its folder does not exist',
    }),
    'naming a folder': () => ({ out: dir, why: 'it is a folder; give a file name' }),
    'in a read-only place': () => ({
      out: join(readOnlyFolder(), 'out.json'),
      why: 'a read-only file system',
    }),
  };
  const cases = Object.keys(runs).flatMap((run) => Object.keys(outs).map((out) => [run, out]));

  it.each(cases)(
    '%s, an --out %s: refused before the run in one line, exit 2',
    (run, where) => {
      const [name, args] = runs[run as keyof typeof runs];
      const { out, why } = outs[where as keyof typeof outs]();
      const result = refusedWithinAMinute(name, [...args, '--out', out]);
      if (process.getuid?.() !== 0 && where === 'in a read-only place') {
        expect(result.stderr).toBe(`error: cannot write ${out}: permission denied\n`);
      } else {
        expect(result.stderr).toBe(`error: cannot write ${out}: ${why}\n`);
      }
      expect([result.status, result.stdout]).toEqual([2, '']);
    },
    120_000,
  );
});

describe('an --out the generators cannot write', () => {
  // Found in review: gen-trace, stage-profiles and profiles checked it only when writing their result.
  // Each run here fails if it starts, so a refusal naming --out shows it was checked first: gen-trace's
  // million jobs need 0.7 GB and end node under a 96 MB heap (exit 134); the others' --data holds a
  // trace they would refuse on reading it.
  const badData = join(dir, 'bad-data');
  mkdirSync(join(badData, 'traces', 'ncf'), { recursive: true });
  writeFileSync(join(badData, 'traces', 'ncf', 'placements.csv'), 'not a trace\n');
  const runs = {
    'gen-trace': {
      args: ['--jobs', '1000000', '--hours', '1000', '--mix', 'cifar10:100'],
      nodeFlags: ['--max-old-space-size=96'],
      prefix: 'error',
    },
    'stage-profiles': { args: ['--data', badData], nodeFlags: [], prefix: 'error' },
    profiles: { args: ['--data', badData], nodeFlags: [], prefix: 'profiles' },
  };
  const outs = {
    'in a missing folder': () => ({ out: join(dir, 'missing', 'out'), why: 'its folder does not exist' }),
    'naming a folder': () => ({ out: dir, why: 'it is a folder; give a file name' }),
    'in a read-only place': () => ({
      out: join(readOnlyFolder(), 'out'),
      // Root is not stopped by modes: readOnlyFolder mounts a read-only file system for it.
      why: process.getuid?.() === 0 ? 'a read-only file system' : 'permission denied',
    }),
  };
  const cases = Object.keys(runs).flatMap((run) => Object.keys(outs).map((out) => [run, out]));

  it.each(cases)(
    '%s, an --out %s: refused before the run in one line, exit 2',
    (run, where) => {
      const { args, nodeFlags, prefix } = runs[run as keyof typeof runs];
      const { out, why } = outs[where as keyof typeof outs]();
      const result = refusedWithinAMinute(`${run}.ts`, [...args, '--out', out], nodeFlags);
      expect(result).toEqual({ status: 2, stdout: '', stderr: `${prefix}: cannot write ${out}: ${why}\n` });
    },
    120_000,
  );
});

describe('profiles on a pipe', () => {
  // Found in review: `profiles | head -1` ended with EPIPE's stack trace, exit 1, once the profile was
  // more than the pipe holds (1000 epochs: 98 KB).
  it('stops quietly when its reader stops early (| head)', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', script('profiles.ts'), '--data', POLLUX, '--epochs', '1000'],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Closed before the profile is written, as `| head -1` is once it has its line: with the reader
    // here taking its first chunk, the rest of the 98 KB still fitted the pipe and nothing failed.
    child.stdout.destroy();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  }, 120_000);
});

describe('frontier given a class there is not', () => {
  // Checked at this review: both already named the names there are.
  it('names the classes of the trace, and of the profile', () => {
    const trace = join(POLLUX, 'workloads/workload-1.csv');
    const unknownApp = runScript('frontier.ts', ['--trace', trace, '--apps', 'cifar100', '--quiet']);
    expect([unknownApp.status, unknownApp.stderr]).toEqual([
      2,
      'error: no jobs of cifar100 in the trace; it has: bert, cifar10, deepspeech2, imagenet, ncf, yolov3\n',
    ]);
    const mystery = join(dir, 'mystery.csv');
    writeFileSync(
      mystery,
      'name,time,application,num_replicas,batch_size\na,0,mystery,1,128\nb,100,cifar10,1,128\n',
    );
    const unprofiled = runScript('frontier.ts', ['--trace', mystery, '--quiet']);
    expect([unprofiled.status, unprofiled.stderr]).toEqual([
      2,
      'error: no profile for class "mystery"; the profile has: bert, cifar10, deepspeech2, imagenet, ncf, yolov3\n',
    ]);
  }, 120_000);
});
