import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Why a file must not be overwritten by a chart, or null if it may: one that does not exist yet, is
 * empty, or holds an SVG already (the chart written before, a re-run). A typo'd `--svg train.py` or
 * `--svg README.md` would have replaced the file without a word.
 */
export function notAChartToReplace(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // not there (or unreadable): the write says what is wrong with it
  }
  try {
    const head = Buffer.alloc(512);
    const read = readSync(fd, head, 0, head.length, 0);
    const text = head.subarray(0, read).toString('utf8').trimStart();
    if (read === 0 || text.startsWith('<svg') || text.startsWith('<?xml')) return null;
    return 'it exists and is not an SVG chart (boa replaces only one it wrote): give a new file name, or remove it first';
  } catch {
    return null; // a folder and the like: the write names the problem
  } finally {
    closeSync(fd);
  }
}
