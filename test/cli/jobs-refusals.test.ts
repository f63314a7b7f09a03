/**
 * What `boa jobs` refuses, with exit 2 (or 1 for a job not found) and storing nothing: an unknown class,
 * a forgotten -- or value, a bad id, limit or state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('refuses an unknown class (exit 2, naming the known ones), a bad id, a missing job', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    // Every run below is refused and stores nothing, so none depends on another: all at once.
    const [
      unknown,
      typo,
      noClass,
      noDashes,
      taken,
      late,
      plain,
      noName,
      forgot,
      both,
      nothing,
      badId,
      unknownName,
      missing,
      badLimit,
      zeroLimit,
      badState,
    ] = await Promise.all([
      s.boa(['jobs', 'submit', 'gpt5', '--self-launched']),
      s.boa(['jobs', 'submit', 'cifar01', '--', 'node', '-e', '0']),
      s.boa(['jobs', 'submit', '--name', 'x', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'train.js', '--epochs', '3']),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'x.js', '--name', 'x']),
      s.boa([
        'jobs',
        'submit',
        'cifar10',
        '--name',
        't',
        '--wait',
        'python3',
        'train.py',
        '--env',
        'A=1',
        '--',
        '--lr',
        "it's",
      ]),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'x.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--name', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--name', 'x']),
      s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--']),
      s.boa(['jobs', 'cancel', '-1']),
      s.boa(['jobs', 'cancel', 'abc']),
      s.boa(['jobs', 'cancel', '99']),
      s.boa(['jobs', 'list', '--limit', 'abc']),
      s.boa(['jobs', 'list', '--limit', '0']),
      s.boa(['jobs', 'list', '--state', 'sleeping']),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^boa: unknown class "gpt5"; known classes: .*cifar10/);
    // A newcomer's own model: the refusal says how a class of its own is added.
    expect(unknown.stderr).toContain(
      'A model of your own runs as the known class closest to it in scaling, or as a class of its own ' +
        'added first with its speedup table: boa classes put class.json',
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
    // A typo names the class it most likely meant.
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(
      /^boa: unknown class "cifar01" \(the closest known name: cifar10\); known classes: /,
    );
    // The class forgotten: commander would take the command's first word for it.
    expect(noClass.status).toBe(2);
    expect(noClass.stderr).toMatch(
      /^boa: no class before --: "node" is the start of the command; give the class first/,
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // The -- forgotten: the job's own option reads as boa's, and the error says where it goes.
    expect(noDashes.status).toBe(2);
    expect(noDashes.stderr).toBe(
      "error: unknown option '--epochs'\n(the job's command and its options go after --: boa jobs submit cifar10 -- node train.js --epochs 3)\n(add --help for usage)\n",
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // The -- forgotten before options boa has too: they were boa's, and the job never saw them.
    expect(taken.status).toBe(2);
    expect(taken.stderr).toBe(
      `boa: the job's command goes after --: boa jobs submit cifar10 -- node x.js --name x (without the --, boa would have run "node x.js" and read options among its words as its own)\n`,
    );
    // boa's own options before the command stay before the --; a word after a late -- is the job's too.
    expect(late.status).toBe(2);
    expect(late.stderr).toMatch(
      /^boa: the job's command goes after --: boa jobs submit cifar10 --name t --wait -- python3 train\.py --env A=1 --lr 'it'\\''s' \(without the --, boa would have run "python3 train\.py --lr 'it'\\''s'"/,
    );
    // Not even a plain command is taken without it.
    expect(plain.status).toBe(2);
    expect(plain.stderr).toMatch(
      /^boa: the job's command goes after --: boa jobs submit cifar10 -- node x\.js /,
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // A value forgotten: commander would take the "--" for it, and the job would be named "--".
    expect(noName.status).toBe(2);
    expect(noName.stderr).toBe('boa: --name needs a value before --, e.g. --name VALUE -- node train.js\n');
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // Nothing after -- (a script's empty $CMD): not a self-launched job nobody would launch.
    // No command and no --self-launched: a forgotten --, which would hold paid GPUs for nobody.
    expect(forgot.status).toBe(2);
    expect(forgot.stderr).toMatch(
      /give the command boa should run after --, e\.g\. boa jobs submit cifar10 -- python3 train\.py \(for a job you launch yourself: --self-launched\)/,
    );
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--self-launched takes no command/);
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toBe(
      'boa: nothing after --: give the command boa should run, e.g. -- python3 train.py\n',
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    expect(badId.status).toBe(2);
    expect(badId.stderr).toMatch(/job id is a positive integer/);
    expect(unknownName.status).toBe(1);
    expect(unknownName.stderr).toBe('boa: no waiting or running job is named "abc" (see boa jobs list)\n');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('boa: job 99 not found (see boa jobs list)\n');
    expect(badLimit.status).toBe(2);
    expect(badLimit.stderr).toBe('boa: --limit must be a number, got "abc"\n');
    // Out of the API's range: its message, and the flag that set it.
    expect(zeroLimit.status).toBe(2);
    expect(zeroLimit.stderr).toMatch(/^boa: .*limit must be a whole number from 1 to 10000.* \(--limit\)\n$/);
    expect(badState.status).toBe(2);
    expect(badState.stderr).toBe(
      'boa: --state takes waiting, running, done, cancelled, failed, lost, or several separated by commas (waiting,running); got "sleeping"\n',
    );
  });
});
