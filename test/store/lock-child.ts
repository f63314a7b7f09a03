/**
 * A process that takes data-dir locks when told, for the race in lock-race.test.ts. Reads lines on
 * stdin: `lock <at> <waitMs> <dir>` waits (spinning, for a start as close as the other child's as
 * possible) until the wall clock reaches `at` ms, calls lockDataDir and answers `won`,
 * `refused <message>` or `error <message>`; `release` releases what it holds and answers `released`.
 */
import { createInterface } from 'node:readline';
import { type DataDirLock, lockDataDir } from '../../src/store/lock.ts';
import { StoreError } from '../../src/store/errors.ts';

let held: DataDirLock | undefined;
const say = (line: string) => process.stdout.write(`${line.replace(/\n/g, ' ')}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const [command, at, waitMs, ...dir] = line.split(' ');
  if (command === 'lock') {
    while (performance.timeOrigin + performance.now() < Number(at));
    try {
      held = lockDataDir(dir.join(' '), Number(waitMs));
      say('won');
    } catch (error) {
      say(`${error instanceof StoreError ? 'refused' : 'error'} ${(error as Error).message}`);
    }
  } else if (command === 'release') {
    held?.release();
    held = undefined;
    say('released');
  }
}
held?.release();
