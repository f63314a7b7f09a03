/**
 * A local replica's log past its cap (src/cloud/local/log-cap.ts, log-tail.ts): cut with nothing the
 * job writes meanwhile lost, the notice on a line of its own, read back across the cut, and never cut
 * once its replica's exit is recorded.
 */
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { capLog, capReplicaLogs, MAYBE_LOST_LINE } from '../../src/cloud/local/log-cap.ts';
import { LocalReplicaLogs } from '../../src/cloud/local/replica-logs.ts';
import { cutQuiet, quiet, writtenJustNow } from './quiet-log-cut.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-log-cap-'));
  dirs.push(dir);
  return dir;
}

const numbered = (text: string) =>
  text
    .split('\n')
    .filter((line) => /^x+\d+$/.test(line))
    .map((line) => Number(line.replace(/x/g, '')));

it('loses nothing a job writes while its log is cut: the kept part ends where the new log begins', async () => {
  const file = join(tempDir(), '0.log');
  writeFileSync(file, '');
  // As the supervisor gives it: the job's own O_APPEND file, a 10 KB numbered line each millisecond.
  const writer = spawn(process.execPath, [
    '-e',
    `const fs = require('node:fs'); const fd = fs.openSync(${JSON.stringify(file)}, 'a'); let i = 0;
     setInterval(() => fs.writeSync(fd, String(i++).padStart(9999, 'x') + '\\n'), 1);`,
  ]);
  try {
    const cap = { capBytes: 2_000_000, keepBytes: 500_000, checkMs: 1 };
    let whole = 0;
    for (let cut = 0; cut < 5; cut++) {
      while (statSync(file).size <= cap.capBytes) await new Promise((r) => setTimeout(r, 2));
      expect(await capLog(file, cap)).toBe(true);
      const kept = readFileSync(`${file}.1`, 'utf8');
      // The notice closes what was kept, on a line of its own.
      expect(kept.slice(-300)).toMatch(/\nboa: this log passed 2 MiB and was cut here: [^\n]*\n$/);
      while (numbered(readFileSync(file, 'utf8')).length === 0) await new Promise((r) => setTimeout(r, 1));
      const before = numbered(kept);
      const after = numbered(readFileSync(file, 'utf8'));
      // Nothing lost, or (a write in the instant between the cut's last read and its truncate) said.
      if (after[0] !== (before.at(-1) as number) + 1) expect(kept).toContain(MAYBE_LOST_LINE);
      else whole++;
      expect(before.every((n, k) => k === 0 || n === (before[k - 1] as number) + 1)).toBe(true);
    }
    // Most cuts of a job writing each millisecond come whole (a copy then truncate lost lines at each).
    expect(whole).toBeGreaterThanOrEqual(3);
  } finally {
    writer.kill('SIGKILL');
  }
}, 60_000);

it("starts the notice on a line of its own when the job's last line is not ended yet", async () => {
  const file = join(tempDir(), '0.log');
  writeFileSync(file, `${'a'.repeat(300)}\nhalf a li`);
  expect(await cutQuiet(file, { capBytes: 100, keepBytes: 200, checkMs: 1 })).toBe(true);
  expect(readFileSync(`${file}.1`, 'utf8')).toMatch(
    /a\nhalf a li\nboa: this log passed 0\.00 MiB and was cut here/,
  );
  expect(readFileSync(file, 'utf8')).toBe('');
});

/** A job's folder as the local executor keeps it: jobs/<id>/<generation>/<rank>.log. */
function jobLog(jobsDir: string, generation = 1) {
  const dir = join(jobsDir, '7', String(generation));
  mkdirSync(dir, { recursive: true });
  return { dir, file: join(dir, '0.log') };
}

const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `line ${from + i}\n`).join('');

it("shows a log's last lines across its cut: a crash's traceback just after, and the lines before it", async () => {
  const jobsDir = tempDir();
  const { file } = jobLog(jobsDir);
  writeFileSync(file, lines(0, 100));
  await cutQuiet(file, { capBytes: 500, keepBytes: 400, checkMs: 1 });
  const logs = new LocalReplicaLogs(jobsDir, 10, () => undefined);
  // Quiet since the cut (its log empty): the last lines before it, then the notice.
  const quiet = logs.read({ jobId: 7, rank: 0, tailLines: 3 })?.text ?? '';
  expect(quiet).toMatch(/^line 98\nline 99\nboa: this log passed [^\n]* was cut here: [^\n]*\n$/);
  appendFileSync(file, 'Traceback (most recent call last):\nValueError: boom\n');
  const crashed = logs.read({ jobId: 7, rank: 0, tailLines: 4 })?.text ?? '';
  expect(crashed).toMatch(
    /^line 99\nboa: this log passed [^\n]*\nTraceback \(most recent call last\):\nValueError: boom\n$/,
  );
  // Fewer lines asked than came after the cut: the log's alone.
  expect(logs.read({ jobId: 7, rank: 0, tailLines: 1 })?.text).toBe('ValueError: boom\n');
});

it('does not cut the log of a replica whose exit is recorded, though its flag still says alive', async () => {
  const { dir, file } = jobLog(tempDir());
  writeFileSync(file, `${lines(0, 100)}Traceback\nValueError: boom\n`);
  writeFileSync(
    join(dir, '0.exit'),
    JSON.stringify({ code: 1, signal: null, reason: 'exited 1', at: Date.now() }),
  );
  quiet(file);
  const replica = { jobId: 7, generation: 1, rank: 0, dir, alive: true };
  const cap = { capBytes: 500, keepBytes: 400, checkMs: 1 };
  await capReplicaLogs([replica], cap, pino({ level: 'silent' }));
  expect(existsSync(`${file}.1`)).toBe(false);
  expect(readFileSync(file, 'utf8')).toMatch(/ValueError: boom\n$/);
  // Without the record it is cut.
  rmSync(join(dir, '0.exit'));
  await capReplicaLogs([replica], cap, pino({ level: 'silent' }));
  expect(existsSync(`${file}.1`)).toBe(true);
});

it('says lines may be missing at the cut of a log its job wrote just before, not of one quiet a minute', async () => {
  const cap = { capBytes: 100, keepBytes: 200, checkMs: 1 };
  const justWritten = join(tempDir(), '0.log');
  writeFileSync(justWritten, lines(0, 50));
  writtenJustNow(justWritten);
  expect(await capLog(justWritten, cap)).toBe(true);
  expect(readFileSync(`${justWritten}.1`, 'utf8')).toMatch(
    new RegExp(`line 49\n${MAYBE_LOST_LINE}boa: this log passed [^\n]*\n$`),
  );
  const quietOne = join(tempDir(), '0.log');
  writeFileSync(quietOne, lines(0, 50));
  expect(await cutQuiet(quietOne, cap)).toBe(true);
  expect(readFileSync(`${quietOne}.1`, 'utf8')).toMatch(/line 49\nboa: this log passed [^\n]*\n$/);
});
