import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_URL } from './connection.ts';

type AddCommand = (program: Command) => void;

/** Each top-level command and the module that adds it, in the order the help lists them. */
const COMMANDS: ReadonlyArray<readonly [name: string, load: () => Promise<AddCommand>]> = [
  ['budget', async () => (await import('./commands/budget.ts')).addBudgetCommands],
  ['status', async () => (await import('./commands/status.ts')).addStatusCommand],
  ['nodes', async () => (await import('./commands/nodes.ts')).addNodesCommand],
  ['plan', async () => (await import('./commands/plan.ts')).addPlanCommands],
  ['jobs', async () => (await import('./commands/jobs.ts')).addJobsCommands],
  ['frontier', async () => (await import('./commands/frontier.ts')).addFrontierCommand],
  ['classes', async () => (await import('./commands/classes.ts')).addClassesCommands],
  ['history', async () => (await import('./commands/history.ts')).addHistoryCommands],
];

/** The first word of the arguments (after `boa`) that is neither an option nor a global option's value. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return undefined;
    if (arg === '--url' || arg === '--token') i++;
    else if (!arg.startsWith('-') || arg === '-') return arg;
  }
  return undefined;
}

/** boa's version, from its package.json (two folders up, in the repository and in the image alike). */
function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
    return String((pkg as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/**
 * The `boa` command tree for these arguments (after `boa`). Exit codes are set by main.ts; commander
 * only reports usage errors. Each command is a process start, so only the command the arguments name
 * is loaded (about a sixth of a start's CPU went on loading the others); without one (help, a typo to
 * suggest a command for) all are.
 */
export async function createProgram(args: readonly string[] = []): Promise<Command> {
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
  const word = commandWord(args);
  const named = COMMANDS.filter(([name]) => name === word);
  const adders = await Promise.all((named.length > 0 ? named : COMMANDS).map(([, load]) => load()));
  for (const add of adders) add(program);
  return program;
}
