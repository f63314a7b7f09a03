import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, resolve } from 'node:path';
import type { Workload } from '../../service/ports.ts';
import { missingScript } from './script-check.ts';
import { foundOnPath } from './search-path.ts';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether the local executor can start this workload's program: a path (it has a slash) must be an
 * executable file, relative to the working directory; a bare name must be found on PATH (the job's own
 * PATH if its env sets one); an interpreter's script must exist (script-check.ts). Checked at submission,
 * so a job that could never start is refused.
 */
export function checkLocalWorkload(
  workload: Workload,
  serviceEnv: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): { field: string; message: string } | undefined {
  const workingDir = workload.workingDir === undefined ? cwd : resolve(cwd, workload.workingDir);
  if (workload.workingDir !== undefined) {
    let isDir: boolean;
    try {
      isDir = statSync(workingDir).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) return { field: 'workload.workingDir', message: `no such directory: ${workingDir}` };
  }
  const problem = programProblem(workload, serviceEnv, workingDir);
  if (problem) return problem;
  const missing = missingScript(workload.command, workingDir, workload.env?.PATH ?? serviceEnv.PATH ?? '');
  return missing === undefined ? undefined : { field: 'workload.command', message: missing };
}

/** Why the program cannot be started (not found, not executable), or undefined. */
function programProblem(
  workload: Workload,
  serviceEnv: NodeJS.ProcessEnv,
  workingDir: string,
): { field: string; message: string } | undefined {
  const program = workload.command[0] ?? '';
  // `-- "python3 train.py"`: one word with a space, which no shell splits here.
  const oneWord =
    workload.command.length === 1 && /\s/.test(program)
      ? '; the command runs without a shell: give its words apart (-- python3 train.py), or -- sh -c "..."'
      : '';
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(workingDir, program);
    if (isExecutableFile(path)) return undefined;
    // A script without its execute bit: it is run with its interpreter.
    const plainFile =
      !oneWord && isFile(path)
        ? `; it is a file without the execute bit: run it with its interpreter (-- node ${program}, -- python3 ${program}) or chmod +x it`
        : '';
    return {
      field: 'workload.command',
      message: `${program} is not an executable file (looked at ${path})${oneWord}${plainFile}`,
    };
  }
  const searchPath = workload.env?.PATH ?? serviceEnv.PATH ?? '';
  if (foundOnPath(program, searchPath, workingDir, isExecutableFile)) return undefined;
  return {
    field: 'workload.command',
    message: `command not found: "${program}" is not an executable on the PATH of this machine (${shortPath(searchPath)}); give its full path, or set PATH with --env${oneWord}`,
  };
}

/** A PATH for a message: under npm it leads with a node_modules/.bin folder per parent directory. */
function shortPath(searchPath: string, shown = 6): string {
  const folders = searchPath.split(delimiter).filter(Boolean);
  if (folders.length <= shown) return folders.join(delimiter);
  return `${folders.slice(0, shown).join(delimiter)}${delimiter}... ${folders.length - shown} more folders`;
}
