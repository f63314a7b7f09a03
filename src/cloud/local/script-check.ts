import { existsSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { foundOnPath } from './search-path.ts';

/**
 * Per interpreter: options whose code is inline (no script follows), options taking the next word as
 * their value, and options that are flags alone. Any other option stops the check: its value, if it
 * has one, could look like a script, and a job refused for a file it never runs would be worse than
 * the failure this check saves (three restarts holding paid GPUs, then failed).
 */
interface Interpreter {
  inline: string[];
  valued: string[];
  flags: string[];
}

const PYTHON: Interpreter = {
  inline: ['-c', '-m', '-'],
  valued: ['-W', '-X', '--check-hash-based-pycs'],
  flags: ['-b', '-bb', '-B', '-d', '-E', '-i', '-I', '-O', '-OO', '-P', '-q', '-s', '-S', '-u', '-v', '-x'],
};
const SHELL: Interpreter = {
  inline: ['-c', '-s', '-'],
  valued: ['-o', '+o'],
  flags: ['-e', '-u', '-x', '-v', '-l', '-i', '--login', '--norc', '--noprofile', '--posix'],
};
const INTERPRETERS: Record<string, Interpreter> = {
  node: {
    inline: ['-e', '--eval', '-p', '--print', '-'],
    valued: ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions'],
    flags: [
      '--enable-source-maps',
      '--experimental-strip-types',
      '--experimental-transform-types',
      '--expose-gc',
      '--inspect',
      '--inspect-brk',
      '--no-deprecation',
      '--no-warnings',
      '--trace-warnings',
      '--watch',
    ],
  },
  python: PYTHON,
  bash: SHELL,
  sh: SHELL,
  ruby: { inline: ['-e', '-'], valued: ['-r', '-I'], flags: ['-w', '-W', '-d', '-v'] },
  perl: { inline: ['-e', '-E', '-'], valued: [], flags: ['-w', '-W', '-T', '-t'] },
};

const SCRIPT_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.py', '.sh', '.rb', '.pl']);

/** python3, python3.12, /usr/bin/node, nodejs, dash, zsh -> the interpreter entry, or undefined. */
function interpreterOf(program: string): [string, Interpreter] | undefined {
  const name = basename(program)
    .replace(/^python[\d.]*$/, 'python')
    .replace(/^nodejs$/, 'node')
    .replace(/^(dash|zsh)$/, 'sh');
  // Own keys only: a program named `constructor` is no interpreter.
  return Object.hasOwn(INTERPRETERS, name) ? [name, INTERPRETERS[name] as Interpreter] : undefined;
}

/** The script an interpreter would run, from its arguments; undefined when none or unsure. */
function scriptOf(interpreter: Interpreter, args: readonly string[]): string | undefined {
  for (let at = 0; at < args.length; at++) {
    const word = args[at] as string;
    if (interpreter.inline.includes(word)) return undefined;
    if (interpreter.valued.includes(word)) at++;
    else if (/^--?[\w-]+=/.test(word) || interpreter.flags.includes(word)) continue;
    else if (word.startsWith('-') || word.startsWith('+')) return undefined;
    else return word;
  }
  return undefined;
}

/**
 * A script the local executor's interpreter would not find (`-- node examples/nosuch.mjs`, `-- python3
 * train.py` from the wrong folder): checked at submission, since the job would otherwise fail only
 * once it has GPUs, after its restarts. A word is taken for a script when it ends like one or has a
 * slash; `python3 -m mod`, `node -e "..."` and `bash -c "..."` run no script.
 */
export function missingScript(
  command: readonly string[],
  workingDir: string,
  /** The job's PATH (its --env PATH, else the service's): what bash looks a script up on. */
  searchPath = process.env.PATH ?? '',
): string | undefined {
  const found = interpreterOf(command[0] ?? '');
  if (!found) return undefined;
  const [name, interpreter] = found;
  const script = scriptOf(interpreter, command.slice(1));
  if (script === undefined) return undefined;
  const extension = extname(script);
  if (!SCRIPT_EXTENSIONS.has(extension) && !script.includes('/')) return undefined;
  // node finds `dist/train` as dist/train.js, .mjs, .json or dist/train/index.js: a module, not a file.
  if (name === 'node' && extension === '') return undefined;
  // bash looks a script without a slash up on PATH when it is not in the folder (`bash deploy.sh`);
  // dash, sh and zsh do not.
  if (name === 'bash' && !script.includes('/') && foundOnPath(script, searchPath, workingDir, existsSync))
    return undefined;
  const path = resolve(workingDir, script);
  if (existsSync(path)) return undefined;
  return `no such file: ${script} (looked at ${path}, from the working directory ${workingDir}); ${command[0]} would fail to start it. Give its path from that folder, or the folder with --workdir`;
}
