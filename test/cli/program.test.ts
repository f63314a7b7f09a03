/**
 * Which command `boa`'s arguments name: only that command's modules are loaded, so the word must be the
 * one commander runs, never a global option's value.
 */
import { describe, expect, it } from 'vitest';
import { commandWord, createProgram } from '../../src/cli/program.ts';

describe('the command word', () => {
  it.each([
    [['budget', 'get'], 'budget'],
    [['--json', 'jobs', 'list'], 'jobs'],
    [['--url', 'status', 'plan'], 'plan'],
    [['--token', 'jobs', '--url', 'http://x', 'budget'], 'budget'],
    [['--url=http://x', 'history', 'export'], 'history'],
    [['-', 'budget'], '-'],
    [['--', 'budget'], undefined],
    [['--help'], undefined],
    [['--url'], undefined],
    [[], undefined],
  ])('of %j is %s', (args, word) => {
    expect(commandWord(args)).toBe(word);
  });
});

describe('the command tree', () => {
  it('has the named command alone, or every command when none is named or the word is no command', async () => {
    const names = async (args: string[]) => (await createProgram(args)).commands.map((c) => c.name());
    const every = ['budget', 'status', 'nodes', 'plan', 'jobs', 'frontier', 'classes', 'history'];
    expect(await names([])).toEqual(every);
    expect(await names(['budgte'])).toEqual(every);
    expect(await names(['help', 'jobs'])).toEqual(every);
    expect(await names(['--url', 'http://x', 'jobs', 'list'])).toEqual(['jobs']);
  });
});
