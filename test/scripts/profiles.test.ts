import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../scripts/profiles.ts';
import { parseProfileFile } from '../../src/core/profile.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const DATA = path.resolve(repoRoot, 'data/pollux');

function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = main(args, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join(''), err: err.join('') };
}

describe('profiles script', () => {
  it('regenerates the committed data/profiles.json exactly', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'boa-profiles-')), 'profiles.json');
    const { code, err } = run(['--data', DATA, '--out', file]);
    expect(code, err).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(path.join(repoRoot, 'data/profiles.json'), 'utf8'));
    // The summary names every app with its 1-GPU hours.
    expect(err).toMatch(/^cifar10\s+8\s+1\.009/m);
  });

  it('writes a valid profile to stdout, with fewer statistical epochs on request', () => {
    const { code, out } = run(['--data', DATA, '--apps', 'bert,cifar10', '--epochs', '3']);
    expect(code).toBe(0);
    const file = parseProfileFile(JSON.parse(out));
    expect(file.classes.map((c) => [c.name, c.epochs.length])).toEqual([
      ['bert', 2],
      ['cifar10', 3],
    ]);
    expect(file.classes[1]?.epochs[0]?.speedup['1']).toBe(1);
  });

  it('explains bad input', () => {
    const missing = path.join(os.tmpdir(), 'no-such-boa-data');
    expect(run(['--data', missing])).toMatchObject({
      code: 2,
      err: `profiles: data folder not found: ${missing}\n`,
    });
    const empty = mkdtempSync(path.join(os.tmpdir(), 'boa-empty-'));
    expect(run(['--data', empty]).err).toMatch(/no traces\/ folder under/);
    expect(run(['--data', empty, '--apps', 'bert']).err).toMatch(
      `no traces/bert/placements.csv under ${empty}`,
    );
    expect(run(['--data', DATA, '--apps', 'gpt5']).err).toMatch(/unknown app "gpt5"/);
    for (const bad of ['0', 'abc', '2.5', '-1']) {
      const r = run(['--data', DATA, '--epochs', bad]);
      expect(r.code, bad).not.toBe(0);
      expect(r.err).toMatch(/--epochs must be a positive integer/);
    }
    expect(run([]).err).toMatch(/required option '--data <dir>'/);
    const unwritable = path.join(empty, 'missing', 'profiles.json');
    expect(run(['--data', DATA, '--apps', 'ncf', '--out', unwritable])).toMatchObject({
      code: 2,
      err: `profiles: cannot write ${unwritable}: its folder does not exist\n`,
    });
  });

  it('runs from the command line', () => {
    const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');
    const out = execFileSync(tsx, ['scripts/profiles.ts', '--data', DATA, '--apps', 'ncf'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(parseProfileFile(JSON.parse(out)).classes[0]?.name).toBe('ncf');
  });
});
