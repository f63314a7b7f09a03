import { existsSync, readFileSync } from 'node:fs';

/**
 * The pid a test's process wrote to `file`, once the file holds it whole. A shell's `echo $! >f` and
 * node's writeFileSync create the file before they write to it, and Number('') is 0: kill(0, ...)
 * names the test's own process group, so a check that the process is gone then never passed (CI).
 * Waits up to 20 s: a node script spawned by another (a worker) takes seconds to start on a loaded machine.
 */
export async function pidFrom(file: string, tries = 800): Promise<number> {
  for (let i = 0; i < tries; i++) {
    const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : Number.NaN;
    if (Number.isInteger(pid) && pid > 0) return pid;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file} never held a pid after ${tries} tries`);
}
