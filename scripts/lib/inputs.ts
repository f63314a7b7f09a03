import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { type ProfileFile, parseProfileFile } from '../../src/core/profile.ts';
import { arrivalRatesPerHour, parseTrace, TraceError, type TraceJob } from '../../src/core/trace.ts';
import { writeProblem } from '../../src/cli/write-problem.ts';
import { checkWritable, writeOutputFiles } from './output-files.ts';

export { writeProblem };

/**
 * What a command's parse error ends with: one line pointing at the help, not the whole help (simulate's
 * is 50 lines, and a typo's error was buried above it), as the boa CLI does.
 */
export const HELP_HINT = '(add --help for usage)';

/**
 * A script's command: a usage error commander finds (an unknown option, a missing value) throws, so
 * runMain exits 2 as for every other bad input (commander alone exits 1), and the hint follows it.
 */
export function scriptProgram(name: string): Command {
  return new Command(name).exitOverride().showHelpAfterError(HELP_HINT);
}

/** A user-facing input problem: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A file's text, or a usage error saying in words why it cannot be read. */
export function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${readProblem(error as NodeJS.ErrnoException)}`);
  }
}

function readProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a folder; give a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return error.code ?? error.message;
  }
}

export function loadProfileFile(path: string): ProfileFile {
  const text = readText(path, 'profile file');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`);
  }
  return parseProfileFile(json, path);
}

export function loadTrace(path: string): TraceJob[] {
  const jobs = parseTrace(readText(path, 'trace'), path);
  // Every command reads rates off the trace; said here, the message can name the file.
  try {
    arrivalRatesPerHour(jobs);
  } catch (error) {
    if (error instanceof TraceError) throw new TraceError(`${path}: ${error.message}`);
    throw error;
  }
  return jobs;
}

/** Comma-separated list option, without empties or repeats. */
export function parseList(value: string, what: string): string[] {
  const items = [...new Set(value.split(',').map((s) => s.trim()))].filter(Boolean);
  if (items.length === 0) throw new UsageError(`${what} is empty; give a comma-separated list`);
  return items;
}

/** Writes to a file (whole or not at all), or stdout when no path is given. */
export function emit(text: string, out?: string): void {
  if (!out) {
    process.stdout.write(text);
    return;
  }
  try {
    writeOutputFiles([[out, text]]);
  } catch (error) {
    throw new UsageError(`cannot write ${out}: ${writeProblem(error as NodeJS.ErrnoException)}`);
  }
}

/** Refuses an --out that cannot be written before the run, which found it only at its end (minutes). */
export function checkOut(out: string | undefined): void {
  if (!out) return;
  try {
    checkWritable(out);
  } catch (error) {
    throw new UsageError(`cannot write ${out}: ${writeProblem(error as NodeJS.ErrnoException)}`);
  }
}

/**
 * A reader that stops early (gen-trace | head) closes the pipe: stop there quietly, as cat and the boa
 * CLI do, not with the write error's stack trace (exit 1).
 */
export function stopQuietlyWhenReaderStops(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** Runs a script's main, turning known input errors into one clear line and exit code 2. */
export async function runMain(main: () => Promise<void> | void): Promise<void> {
  stopQuietlyWhenReaderStops();
  try {
    await main();
  } catch (error) {
    // Commander has printed its message (or the help, exit code 0) already.
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    const known = ['UsageError', 'ProfileError', 'TraceError', 'InstanceError', 'BudgetTooLowError'];
    if (error instanceof Error && known.includes(error.name)) {
      process.stderr.write(`error: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
}
