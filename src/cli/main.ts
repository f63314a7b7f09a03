/**
 * `boa`: the command-line client of the boa service. Exit codes: 0 ok, 1 the service refused or
 * failed, 2 bad input (usage, 400, 422), 3 service unreachable, 4 token missing or refused.
 */
import { CommanderError } from 'commander';
import { CliError, EXIT } from './errors.ts';
import { printable, printableJson } from './format.ts';
import { createProgram } from './program.ts';

export async function run(argv: string[]): Promise<number> {
  const program = await createProgram(argv.slice(2));
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has printed the message (or the help) already.
      return error.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    }
    if (error instanceof CliError) {
      if (program.opts<{ json?: boolean }>().json && error.body)
        process.stdout.write(`${printableJson(error.body)}\n`);
      process.stderr.write(`boa: ${printable(error.message, true)}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

// A reader that stops early (boa history export | head) closes the pipe: stop there quietly, as cat
// and grep do, not with the write error's stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});

process.exitCode = await run(process.argv);
