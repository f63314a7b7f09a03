import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temporary folder per test run, set as TMPDIR before the workers start, so every temp dir a test
 * or a process it spawns makes (os.tmpdir(), mktemp, the fake trainer's checkpoints) lives under it, and
 * removed when the run ends: nothing is left in /tmp even when a test fails before its own clean-up.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'boa-test-run-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
