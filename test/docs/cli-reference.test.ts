/**
 * docs/cli.md against the CLI's command tree: every command and option the CLI has is in the reference,
 * and every option the reference names is one the CLI has. Flags are added in code and described in
 * prose; nothing else ties the two together.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.ts';
import { REPO } from './markdown-files.ts';

/** Flags the reference names that are not the CLI's, each with where it belongs. */
const OTHER_TOOLS_FLAGS = new Set([
  '--history', // npm run compare's, which `history import` places traces as
  '--help', // commander's own, on every command
]);

interface Listed {
  readonly path: string;
  readonly hidden: boolean;
  readonly flags: readonly string[];
}

function* walk(command: Command, prefix: string[]): Generator<Listed> {
  for (const sub of command.commands) {
    const path = [...prefix, sub.name()];
    yield {
      path: path.join(' '),
      hidden: (sub as unknown as { _hidden?: boolean })._hidden === true,
      flags: sub.options.flatMap((o) => (o.long ? [o.long] : [])),
    };
    yield* walk(sub, path);
  }
}

const doc = readFileSync(join(REPO, 'docs/cli.md'), 'utf8');

/** The `--flags` written in the reference, URLs left out. */
function flagsIn(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const match of markdown.matchAll(/(?<![\w/-])--[a-z][a-z-]*[a-z]/g)) found.add(match[0]);
  return found;
}

describe('docs/cli.md', () => {
  it('names every command and option the CLI has', async () => {
    const program = await createProgram();
    const listed = [...walk(program, [])];
    expect(listed.length).toBeGreaterThan(25);
    const missing: string[] = [];
    for (const { path, hidden, flags } of listed) {
      const name = path.split(' ').at(-1) as string;
      // A hidden command (a verb other tools use, pointing at the one boa has) is named, not shown.
      if (hidden ? !doc.includes(`\`${name}\``) : !doc.includes(`boa ${path}`)) missing.push(`boa ${path}`);
      for (const flag of flags) if (!flagsIn(doc).has(flag)) missing.push(`boa ${path} ${flag}`);
    }
    for (const option of program.options)
      if (option.long && !flagsIn(doc).has(option.long)) missing.push(`boa ${option.long}`);
    expect(missing).toEqual([]);
  });

  it('names no option the CLI does not have', async () => {
    const program = await createProgram();
    const known = new Set([
      ...program.options.flatMap((o) => (o.long ? [o.long] : [])),
      ...[...walk(program, [])].flatMap((c) => c.flags),
    ]);
    const unknown = [...flagsIn(doc)].filter((flag) => !known.has(flag) && !OTHER_TOOLS_FLAGS.has(flag));
    expect(unknown).toEqual([]);
  });
});
