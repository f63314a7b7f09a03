/** A replica's log: bounded past its cap, its last lines read from its end. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { MAYBE_LOST_LINE } from '../../src/cloud/local/log-cap.ts';
import { readLogTail } from '../../src/cloud/local/log-tail.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { job } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

describe('local executor', () => {
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
});
