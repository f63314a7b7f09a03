import { accessSync, closeSync, constants, openSync } from 'node:fs';

/**
 * Why a file system call failed, in words an operator can act on: SQLite says only "unable to open
 * database file" for a data dir boa may not write, naming neither the file nor the cause (found in a
 * trial, running as another user).
 */
export function fsCause(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `not writable: permission denied for the user boa runs as${uid()}`;
    case 'EROFS':
      return 'not writable: a read-only file system';
    case 'ENOSPC':
      return 'not writable: no space left on the device';
    case 'EISDIR':
      return 'a directory, not a file';
    case 'ENOTDIR':
      return 'not reachable: a part of its path is a file, not a directory';
    default:
      return code ? `${code} (${message})` : message;
  }
}

function uid(): string {
  return process.getuid ? ` (uid ${process.getuid()})` : '';
}

/** Why this process cannot write `path` (a directory, or a file that exists), or undefined when it can. */
export function unwritable(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // made later, in a writable dir
    return fsCause(error);
  }
}

/**
 * Why `file` cannot be opened for writing, found by opening it as SQLite would (created if absent), for
 * a message once SQLite has failed; undefined when it can be.
 */
export function openProblem(file: string): string | undefined {
  try {
    closeSync(openSync(file, 'a', 0o600));
    return undefined;
  } catch (error) {
    return fsCause(error);
  }
}
