import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes `file` whole or not at all, and on disk when this returns: a temporary file, synced, renamed
 * over it, and its folder synced (the rename is on disk only once the folder is). Without the syncs a
 * power loss could keep a later write (a mark saying this file is complete) and lose this one's data.
 */
export function writeFileDurably(file: string, text: string, mode = 0o600): void {
  const temporary = `${file}.tmp-${process.pid}`;
  try {
    const fd = openSync(temporary, 'w', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncFolder(dirname(file));
}

/** A file created, renamed or removed in `folder` is on disk only once the folder is synced. */
export function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
