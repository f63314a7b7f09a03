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
  const given = workload.env?.PATH;
  const searchPath = given ?? serviceEnv.PATH ?? '';
  if (foundOnPath(program, searchPath, workingDir, isExecutableFile)) return undefined;
  return {
    field: 'workload.command',
    message: `command not found: "${program}" is not an executable on the job's PATH (${pathForMessage(searchPath, given !== undefined)}); give its full path, or set PATH with --env${oneWord}`,
  };
}

/**
 * npm's own folders: under `npm start` it puts a node_modules/.bin per parent directory (and its
 * node-gyp-bin) before the PATH it was given.
 */
const NPM_FOLDER = /[/\\]node_modules[/\\]\.bin$|[/\\]node-gyp-bin$/;

/**
 * The PATH a job runs with, for a message. Given with --env, as given; else the service's, which the
 * job inherits whole (npm's folders included; changing that would change what jobs run): npm's are
 * counted, not listed, since read as "this machine's PATH" they hid the folders a newcomer looked for.
 */
function pathForMessage(searchPath: string, given: boolean, shown = 6): string {
  const all = searchPath.split(delimiter).filter(Boolean);
  const folders = given ? all : all.filter((folder) => !NPM_FOLDER.test(folder));
  const npm = all.length - folders.length;
  const listed =
    folders.length <= shown
      ? folders.join(delimiter)
      : `${folders.slice(0, shown).join(delimiter)}${delimiter}... ${folders.length - shown} more folders`;
  const source = given ? 'from --env' : "the service's, which the job inherits";
  const npmNote =
    npm === 0
      ? ''
      : `; not listed: ${npm === 1 ? 'the folder' : `the ${npm} folders`} npm put before them (node_modules/.bin), which the job inherits too`;
  return `${source}: ${listed || 'none'}${npmNote}`;
}
