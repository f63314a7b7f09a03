import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../src/core/trace.ts';
import { runScript } from '../helpers/run-script.ts';

describe('gen-trace', () => {
  it('writes a trace file with the asked jobs, span and mix', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gen-trace-')), 'trace.csv');
    const run = runScript('gen-trace.ts', [
      ...['--jobs', '200', '--hours', '10', '--mix', 'cifar10:75,bert:25', '--scv', '2.65', '--seed', '4'],
      ...['--out', out],
    ]);
    // Written to a file: one line says what and where; percentages summing to 100 need no note.
    expect(run.stderr).toBe(`wrote ${out}: 200 jobs arriving over 10 h\n`);
    expect(run.status).toBe(0);
    const jobs = parseTrace(readFileSync(out, 'utf8'));
    expect(jobs).toHaveLength(200);
    expect(jobs[199]?.time).toBe(36_000);
    expect(jobs.filter((j) => j.application === 'cifar10')).toHaveLength(150);
  });

  it('says when the --mix weights do not sum to 100 and were normalised', () => {
    const run = runScript('gen-trace.ts', ['--jobs', '8', '--hours', '1', '--mix', 'cifar10:3,bert:1']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('--mix sums to 4, not 100: normalised to cifar10 75%, bert 25%\n');
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(9);
  });

  it('prints to stdout by default and is reproducible for a seed', () => {
    const args = ['--jobs', '20', '--hours', '1', '--mix', 'ncf:100', '--seed', '9'];
    const first = runScript('gen-trace.ts', args);
    expect(first.stderr).toBe('');
    expect(first.stdout.split('\n')[0]).toBe('name,time,application,num_replicas,batch_size');
    expect(runScript('gen-trace.ts', args).stdout).toBe(first.stdout);
  });

  it('refuses bad options with one line and exit code 2', () => {
    const bad = runScript('gen-trace.ts', ['--jobs', '20', '--hours', '1', '--mix', 'cifar10=3']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^error: --mix: "cifar10=3" is not app:percent/);
    const scv = runScript('gen-trace.ts', ['--jobs', '20', '--hours', '1', '--mix', 'bert:1', '--scv', '-2']);
    expect(scv.stderr).toMatch(/--scv must be a number >= 0, got "-2"/);
    // The generator keeps 32 bits of a seed: 2^32 + 1 would draw what 1 draws.
    const seed = runScript('gen-trace.ts', [
      '--jobs',
      '3',
      '--hours',
      '1',
      '--mix',
      'bert:1',
      '--seed',
      '4294967297',
    ]);
    expect(seed.status).toBe(2);
    expect(seed.stderr).toBe('error: --seed must be an integer from 0 to 4294967295, got "4294967297"\n');
    // An --out into a folder that does not exist: said in words, not an ENOENT stack trace.
    const out = join(mkdtempSync(join(tmpdir(), 'gen-trace-')), 'missing', 'trace.csv');
    const unwritable = runScript('gen-trace.ts', [
      '--jobs',
      '20',
      '--hours',
      '1',
      '--mix',
      'bert:1',
      '--out',
      out,
    ]);
    expect(unwritable.status).toBe(2);
    expect(unwritable.stderr).toBe(`error: cannot write ${out}: its folder does not exist\n`);
  });
});
