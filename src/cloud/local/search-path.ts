import { delimiter, join, resolve } from 'node:path';

/**
 * Whether `name` is found in a folder of `searchPath` (a PATH) by `accept`; relative entries are the
 * working directory's, as the job resolves them.
 */
export function foundOnPath(
  name: string,
  searchPath: string,
  workingDir: string,
  accept: (path: string) => boolean,
): boolean {
  return searchPath
    .split(delimiter)
    .some((folder) => folder !== '' && accept(join(resolve(workingDir, folder), name)));
}
