import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The free space /dev/shm needs to be used (a container's has 64 MiB by default, too little for a demo). */
const RAM_TMP_MIN_FREE_BYTES = 1024 ** 3;

/**
 * One temporary folder per test run, set as TMPDIR before the workers start, so every temp dir a test
 * or a process it spawns makes (os.tmpdir(), mktemp, the fake trainer's checkpoints) lives under it, and
 * removed when the run ends: nothing is left in /tmp even when a test fails before its own clean-up.
 * Where the machine has a roomy /dev/shm, a second one there, as TEST_RAM_TMPDIR (see
 * helpers/ram-tmp.ts), removed the same way.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'boa-test-run-'));
  process.env.TMPDIR = dir;
  const ram = ramTmpRoot();
  if (ram !== undefined) process.env.TEST_RAM_TMPDIR = ram;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    if (ram !== undefined) rmSync(ram, { recursive: true, force: true });
  };
}

function ramTmpRoot(): string | undefined {
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < RAM_TMP_MIN_FREE_BYTES) return undefined;
    return mkdtempSync('/dev/shm/boa-test-run-');
  } catch {
    return undefined; // no /dev/shm (macOS) or not writable: tests use TMPDIR
  }
}
