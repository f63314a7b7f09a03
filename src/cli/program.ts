import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { addBudgetCommands } from './commands/budget.ts';
import { addClassesCommands } from './commands/classes.ts';
import { addFrontierCommand } from './commands/frontier.ts';
import { addHistoryCommands } from './commands/history.ts';
import { addJobsCommands } from './commands/jobs.ts';
import { addPlanCommands } from './commands/plan.ts';
import { addStatusCommand } from './commands/status.ts';
import { DEFAULT_URL } from './connection.ts';

/** boa's version, from its package.json (two folders up, in the repository and in the image alike). */
function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
    return String((pkg as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** The `boa` command tree. Exit codes are set by main.ts; commander only reports usage errors. */
export function createProgram(): Command {
  const program = new Command('boa')
    .description('boa: budget-aware GPU rental for ML training (talks to the boa service)')
    .version(version(), '-V, --version', "boa's version")
    .option('--url <url>', `the boa service (default: $BOA_URL, or ${DEFAULT_URL})`)
    .option(
      '--token <token>',
      'operator token (default: $BOA_TOKEN, or for a local URL the file data/token the service wrote)',
    )
    .option('--json', "print the API's JSON unchanged, for scripts")
    // One line pointing at the help, not the whole help after every typo (it buried the error).
    .showHelpAfterError('(add --help for usage)')
    // Must precede the subcommands: .command() copies it to each, so no usage error calls process.exit.
    .exitOverride();
  addBudgetCommands(program);
  addStatusCommand(program);
  addPlanCommands(program);
  addJobsCommands(program);
  addFrontierCommand(program);
  addClassesCommands(program);
  addHistoryCommands(program);
  return program;
}
