import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Undoes a first start that never served: a start refused for its port (or address) has already made
 * the data dir (database, token, lock), and an operator who fixes the port and points elsewhere would
 * find a stray data dir with a token nobody uses. Only what did not exist before is removed: the dir
 * if it was absent, its entries if it was empty; a data dir with anything in it is never touched.
 */
export function undoFreshDataDir(dataDir: string): () => void {
  const absent = !existsSync(dataDir);
  const empty = !absent && isEmptyDir(dataDir);
  return () => {
    if (absent) rmSync(dataDir, { recursive: true, force: true });
    else if (empty)
      for (const entry of readdirSync(dataDir))
        rmSync(join(dataDir, entry), { recursive: true, force: true });
  };
}

function isEmptyDir(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return false; // a file, or unreadable: not ours to clean
  }
}
