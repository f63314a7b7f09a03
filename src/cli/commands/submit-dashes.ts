import type { Command } from 'commander';
import { printable } from '../format.ts';
import { usageError } from '../errors.ts';

/** The command line as given, `--` included (commander drops it from the words). */
export function rawArgsOf(command: Command): string[] {
  let root = command;
  while (root.parent) root = root.parent;
  return (root as Command & { rawArgs?: string[] }).rawArgs ?? [];
}

/** commander fills <class> from the words after -- when none comes before: `submit -- node x.js`. */
export function classCameAfterDashes(command: Command, className: string, words: string[]): boolean {
  const raw = rawArgsOf(command);
  const dashes = raw.indexOf('--');
  if (dashes < 0) return false;
  const after = raw.slice(dashes + 1);
  return after.length === words.length + 1 && after[0] === className;
}

/**
 * `submit cifar10 node x.js --name x`: without --, commander takes the job's own options (--name, --env,
 * --workdir, --checkpoint) as boa's, and the job never sees them. So every word of the command must
 * come after --; the error shows the command line with it, and what boa would have run.
 */
export function refuseWordsBeforeDashes(command: Command, className: string, words: string[]): void {
  const raw = rawArgsOf(command);
  const dashes = raw.indexOf('--');
  const after = dashes < 0 ? [] : raw.slice(dashes + 1);
  if (words.length === 0 || after.length >= words.length) return;
  const given = raw.slice(raw.indexOf(command.name()) + 1, dashes < 0 ? raw.length : dashes);
  // boa's options before the command's first word are boa's; that word and all after it, the job's.
  const own: string[] = [];
  let at = 0;
  let classSeen = false;
  for (; at < given.length; at++) {
    const token = given[at] as string;
    if (token.startsWith('-') && token.length > 1) {
      own.push(token);
      if (!token.includes('=') && takesValue(command, token) && at + 1 < given.length)
        own.push(given[++at] as string);
    } else if (classSeen) break;
    else classSeen = true;
  }
  const line = [
    'boa jobs submit',
    className,
    ...own.map(shellWord),
    '--',
    ...[...given.slice(at), ...after].map(shellWord),
  ];
  throw usageError(
    `the job's command goes after --: ${line.join(' ')} (without the --, boa would have run ` +
      `"${words.map(shellWord).join(' ')}" and read options among its words as its own)`,
  );
}

/** Whether a flag of this command or a parent's takes a value (`--name x`, not `--wait`). */
function takesValue(command: Command, flag: string): boolean {
  for (let c: Command | null = command; c; c = c.parent) {
    const option = c.options.find((o) => o.long === flag || o.short === flag);
    if (option) return option.required || option.optional;
  }
  return false;
}

/** A word as a shell would need it typed: quoted when it has anything but plain characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${printable(word).replaceAll("'", `'\\''`)}'`;
}
