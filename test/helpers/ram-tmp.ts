import { tmpdir } from 'node:os';

/**
 * A folder for a test's service data dirs that is RAM-backed where the machine allows (global-tmp.ts
 * makes it), else TMPDIR. The service commits to SQLite with synchronous=FULL, an fsync each commit: a
 * demo replay makes thousands, and on disk they took a third of its time (35 s against 22 s measured).
 * What a test checks does not depend on them: a kill -9 loses nothing the page cache holds either way.
 */
export function ramTmpdir(): string {
  return process.env.TEST_RAM_TMPDIR ?? tmpdir();
}
