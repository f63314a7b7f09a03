import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { syncFolder } from '../../src/cloud/durable-file.ts';

/** A file's new text, or null: the file is to be removed (an earlier run's, which would be read as these). */
export type OutputFiles = ReadonlyArray<readonly [path: string, text: string | null]>;

/**
 * Writes a script's output files all or none: each is written whole to a temporary file beside it first,
 * then all are renamed into place at once. Written in place (writeFileSync truncates first), a Ctrl-C or
 * a full disk mid-write left a half file where the previous good one was, and compare's folder held new
 * results.json beside old charts and an old at-paid.json.
 */
export function writeOutputFiles(files: OutputFiles): void {
  holdSignalsWhileWriting();
  const staged: Array<[temporary: string, target: string]> = [];
  try {
    for (const [path, text] of files) {
      if (text === null) continue;
      const target = renameTarget(path);
      if (target === undefined) {
        // A device or pipe (--out /dev/stdout): nothing to replace, and renaming over it would remove it.
        writeFileSync(path, text);
        continue;
      }
      const temporary = `${target}.tmp-${process.pid}`;
      staged.push([temporary, target]);
      const fd = openSync(temporary, 'w', 0o666);
      try {
        // writeSync may write less than asked (writeFileSync loops so too).
        const bytes = Buffer.from(text);
        for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    for (const [temporary] of staged) rmSync(temporary, { force: true });
    throw error;
  }
  try {
    for (const [temporary, target] of staged) renameSync(temporary, target);
  } finally {
    for (const [temporary] of staged) rmSync(temporary, { force: true });
  }
  const removed = files.filter(([, text]) => text === null).map(([path]) => path);
  for (const path of removed) rmSync(path, { force: true });
  // The renames and removals are on disk only once their folders are.
  for (const folder of new Set([...staged.map(([, target]) => target), ...removed].map((p) => dirname(p)))) {
    syncFolder(folder);
  }
}

/**
 * Where the file's new text is renamed to: the file a symlink points at (renaming over the link would
 * replace it with a file), undefined for what is not a regular file (a device, a pipe), which is written
 * as it is. A folder is refused before anything is written, as writeFileSync refused it (EISDIR).
 */
function renameTarget(path: string): string | undefined {
  let isLink: boolean;
  try {
    isLink = lstatSync(path).isSymbolicLink();
  } catch {
    return path; // none yet
  }
  let target = path;
  let stat: Stats;
  try {
    if (isLink) target = realpathSync(path);
    stat = statSync(target);
  } catch {
    return target; // a link to a file not made yet
  }
  if (stat.isDirectory()) {
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, open '${path}'`), {
      code: 'EISDIR',
    });
  }
  return stat.isFile() ? target : undefined;
}

let signalsHeld = false;

/**
 * SIGINT and SIGTERM wait for the write under way: their default action ended the process mid-write and
 * left `<file>.tmp-<pid>` beside the output. writeOutputFiles is synchronous, so a handler runs only once it
 * has returned, its temporaries renamed or removed; the process then ends by the signal as it would have,
 * unless the script handles the signal itself (the demo does).
 */
function holdSignalsWhileWriting(): void {
  if (signalsHeld) return;
  signalsHeld = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const endAsTheSignalWould = () => {
      if (process.listenerCount(signal) > 1) return;
      process.removeListener(signal, endAsTheSignalWould);
      process.kill(process.pid, signal);
    };
    process.on(signal, endAsTheSignalWould);
  }
}

/**
 * Throws what writing `path` would meet (a missing folder, a folder, a read-only place), writing nothing:
 * checked before a run of minutes, which otherwise found it only at its end.
 */
export function checkWritable(path: string): void {
  const target = renameTarget(path);
  // A device or pipe is written as it is; a file is written beside its target, in its folder.
  if (target === undefined) return accessSync(path, constants.W_OK);
  const folder = dirname(target);
  if (!statSync(folder).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, '${folder}'`), { code: 'ENOTDIR' });
  }
  accessSync(folder, constants.W_OK);
}
