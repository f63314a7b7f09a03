/**
 * Every command's help, walked through the command tree: a default shown is one a reader can use.
 * `boa jobs submit --help` said "(default: [])" of --env (found trying boa as a newcomer).
 */
import type { Command } from 'commander';
import { expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.ts';

function* commandsOf(command: Command): Generator<Command> {
  yield command;
  for (const sub of command.commands) yield* commandsOf(sub);
}

it('shows no empty list or object as a default, in any command', async () => {
  const commands = [...commandsOf(await createProgram())];
  expect(commands.length).toBeGreaterThan(20);
  for (const command of commands) {
    expect(command.helpInformation(), command.name()).not.toMatch(/\(default:\s+(\[\]|\{\})\)/);
  }
});
