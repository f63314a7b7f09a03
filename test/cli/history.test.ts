/**
 * `boa history`: job logs and workload traces imported for the rate estimator. Traces land where
 * `compare --history` puts them (scripts/lib/other-days.ts), so the service reads what the simulator
 * measured.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyFrom } from '../../scripts/lib/other-days.ts';
import { BOUNDS } from '../../src/api/bounds.ts';
import { MAX_IMPORT_ARRIVALS } from '../../src/cli/history-file.ts';
import { ManualClock } from '../service/harness.ts';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const T0 = Date.UTC(2026, 10, 1);
const HOUR = 3_600_000;
const WORKLOADS = resolve(import.meta.dirname, '../../data/pollux/workloads');

async function started() {
  const s = await startCliService({ clock: new ManualClock(T0) });
  cleanups.push(s.close);
  return s;
}

const stored = (s: Awaited<ReturnType<typeof started>>) =>
  s.repo
    .submissionsSince(0)
    .map((a) => `${a.submittedAt} ${a.className}`)
    .sort();

/** `boa ARGS`, run without a service: its stdout. */
function boaOffline(args: string[]): string {
  return execFileSync(process.execPath, [resolve(import.meta.dirname, '../../src/cli/boa.mjs'), ...args], {
    encoding: 'utf8',
  });
}

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa history', { timeout: 180_000 }, () => {
  it("says --gap-hours's default in its help: a minute, not the 16 its example gives", () => {
    const help = boaOffline(['history', 'import', '--help']).replace(/\s+/g, ' ');
    expect(help).toContain(
      '--gap-hours <hours> quiet hours before each trace (default: a minute, the least;',
    );
  });

  it('places workload traces back to back before the record, the last file nearest, as compare --history does', async () => {
    const s = await started();
    const files = [join(WORKLOADS, 'workload-2.csv'), join(WORKLOADS, 'workload-3.csv')];
    const run = await s.boa(['history', 'import', ...files, '--gap-hours', '17']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // Two 8-hour days 17 hours apart reach past the estimator's 48 hours: the oldest arrivals are left out.
    expect(run.stdout).toMatch(
      /workload-2\.csv: imported \d+ arrivals as #2, .*\n {2}\d+ older than the rate estimator reads left out/,
    );
    expect(run.stdout).toMatch(/workload-3\.csv: imported 160 arrivals as #1,/);

    const expected = historyFrom(files, join(WORKLOADS, 'workload-1.csv'), undefined, 17)
      .map((h) => ({ className: h.app, submittedAt: Math.round(T0 - h.secondsBefore * 1000) }))
      .filter((a) => a.submittedAt > T0 - 48 * HOUR)
      .map((a) => `${a.submittedAt} ${a.className}`)
      .sort();
    expect(expected.length).toBeGreaterThan(160);
    expect(stored(s)).toEqual(expected);

    const listed = await s.boa(['history', 'list']);
    expect(listed.stdout).toMatch(/^record began\s+2026-11-01T00:00:00Z$/m);
    expect(listed.stdout).toMatch(/^ *1 +workload-3\.csv +160 /m);
    expect(listed.stdout).toMatch(/^ *2 +workload-2\.csv +\d+ /m);

    // Another day goes before the earliest, here past what the estimator reads: refused, nothing stored.
    const anotherDay = join(s.cwd, 'monday.csv');
    writeFileSync(anotherDay, readFileSync(files[1] as string));
    const older = await s.boa(['history', 'import', anotherDay]);
    expect(older.status).toBe(2);
    expect(older.stderr).toMatch(/all 160 arrivals are older than the rate estimator reads/);
    expect(stored(s)).toEqual(expected);
  });

  it('imports the same traces again as the imports they made: nothing changes', async () => {
    const s = await started();
    const files = [join(WORKLOADS, 'workload-2.csv'), join(WORKLOADS, 'workload-3.csv')];
    expect((await s.boa(['history', 'import', ...files])).status).toBe(0);
    const before = stored(s);
    const again = await s.boa(['history', 'import', ...files]);
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/workload-2\.csv: imported before, as #2; nothing changed/);
    expect(again.stdout).toMatch(/workload-3\.csv: imported before, as #1; nothing changed/);
    expect(stored(s)).toEqual(before);
    expect((await s.request('GET', '/v1/history')).body.imports).toHaveLength(2);

    // Other content under a name imported before is another day: placed before the earliest.
    const edited = join(s.cwd, 'workload-3.csv');
    writeFileSync(edited, 'name,time,application,num_replicas,batch_size\nj1,0,bert,1,8\nj2,600,bert,1,8\n');
    const other = await s.boa(['history', 'import', edited]);
    expect(other.stderr).toBe('');
    expect(other.stdout).toMatch(/workload-3\.csv: imported 2 arrivals as #3,/);
    const imports = (await s.request('GET', '/v1/history')).body.imports as Array<{
      id: number;
      lastArrivalAt: string;
      firstArrivalAt: string;
    }>;
    const third = imports.find((i) => i.id === 3)!;
    const earliest = Math.min(...imports.filter((i) => i.id !== 3).map((i) => Date.parse(i.firstArrivalAt)));
    expect(Date.parse(third.lastArrivalAt)).toBeLessThan(earliest);
  });

  it('imports a job log at its own times, once, and deletes it', async () => {
    const s = await started();
    const log = join(s.cwd, 'jobs.csv');
    writeFileSync(
      log,
      'class,submitted_at,user\n' +
        `cifar10,${new Date(T0 - 3 * HOUR).toISOString()},ana\n` +
        `bert,${T0 - 2 * HOUR},li\n` +
        'gpt5,2026-10-31T23:00:00+00:00,sam\n',
    );
    const unknown = await s.boa(['history', 'import', log]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/class\(es\) the service does not have: gpt5; its classes are /);

    const run = await s.boa(['history', 'import', log, '--known-classes', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const [body] = JSON.parse(run.stdout);
    expect(body).toMatchObject({
      alreadyImported: false,
      import: { id: 1, arrivals: 2, source: 'jobs.csv' },
    });
    expect(stored(s)).toEqual([`${T0 - 3 * HOUR} cifar10`, `${T0 - 2 * HOUR} bert`]);

    const twice = await s.boa(['history', 'import', log, '--known-classes']);
    expect(twice.stdout).toMatch(
      /jobs\.csv: imported before, as #1; nothing changed\n {2}1 arrival of classes the service does not have left out/,
    );
    expect((await s.boa(['history', 'delete', '1'])).status).toBe(0);
    expect(stored(s)).toEqual([]);
    expect((await s.boa(['history', 'list'])).stdout).toMatch(/no history imported/);

    // Each file is its own import: the last went in first, and a refusal of the other says so.
    const good = join(s.cwd, 'good.csv');
    writeFileSync(good, `class,submitted_at\nbert,${T0 - HOUR}\n`);
    const partial = await s.boa(['history', 'import', log, good]);
    expect(partial.status).toBe(2);
    expect(partial.stderr).toMatch(
      /jobs\.csv: .*does not have: gpt5.*\(imported before it: .*good\.csv \(#2\)\)/,
    );
    expect(stored(s)).toEqual([`${T0 - HOUR} bert`]);
  });

  it("--known-classes refuses a file with none of the service's classes before importing any other", async () => {
    const s = await started();
    const other = join(s.cwd, 'other-team.csv');
    writeFileSync(other, `class,submitted_at\ngpt5,${T0 - 2 * HOUR}\n`);
    const good = join(s.cwd, 'good.csv');
    writeFileSync(good, `class,submitted_at\nbert,${T0 - HOUR}\n`);
    const run = await s.boa(['history', 'import', other, good, '--known-classes']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/other-team\.csv: no arrivals of the service's classes/);
    // good.csv (the last file, imported first) did not go in unannounced behind the refusal.
    expect(stored(s)).toEqual([]);
  });

  it('reads a file saved with a byte order mark (Excel\'s "CSV UTF-8"), a job log or a trace', async () => {
    const s = await started();
    const log = join(s.cwd, 'excel.csv');
    writeFileSync(log, `\uFEFFclass,submitted_at\r\ncifar10,${T0 - HOUR}\r\n`);
    const run = await s.boa(['history', 'import', log]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(stored(s)).toEqual([`${T0 - HOUR} cifar10`]);

    const trace = join(s.cwd, 'trace.csv');
    writeFileSync(
      trace,
      '\uFEFFname,time,application,num_replicas,batch_size\nj1,0,bert,1,8\nj2,60,bert,1,8\n',
    );
    const traced = await s.boa(['history', 'import', trace]);
    expect(traced.stderr).toBe('');
    expect(traced.status).toBe(0);
    expect(stored(s)).toHaveLength(3);
  });

  it('exports what the estimator reads, and another service that imports it reads the same rates', async () => {
    const a = await started();
    const log = join(a.cwd, 'old.csv');
    writeFileSync(
      log,
      `class,submitted_at\n${[30, 20, 10].map((h, i) => `${i ? 'bert' : 'cifar10'},${T0 - h * HOUR}`).join('\n')}\n`,
    );
    expect((await a.boa(['history', 'import', log])).status).toBe(0);
    for (const hours of [1, 2]) {
      a.clock.t = T0 + hours * HOUR;
      expect((await a.request('POST', '/v1/jobs', { class: 'ncf' })).status).toBe(201);
    }
    a.clock.t = T0 + 3 * HOUR;
    const exported = await a.boa(['history', 'export']);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout.split('\n')).toEqual([
      'class,submitted_at',
      `cifar10,${new Date(T0 - 30 * HOUR).toISOString()}`,
      `bert,${new Date(T0 - 20 * HOUR).toISOString()}`,
      `bert,${new Date(T0 - 10 * HOUR).toISOString()}`,
      `ncf,${new Date(T0 + HOUR).toISOString()}`,
      `ncf,${new Date(T0 + 2 * HOUR).toISOString()}`,
      '',
    ]);

    const b = await startCliService({ clock: new ManualClock(T0 + 4 * HOUR) });
    cleanups.push(b.close);
    writeFileSync(join(b.cwd, 'a.csv'), exported.stdout);
    expect((await b.boa(['history', 'import', join(b.cwd, 'a.csv')])).status).toBe(0);
    expect(stored(b)).toEqual(stored(a));
    expect(b.service.estimatedRates(T0 + 4 * HOUR)).toEqual(a.service.estimatedRates(T0 + 4 * HOUR));
  });

  it('imports an export of more arrivals than one import takes: the newest, saying how many are left out', async () => {
    const a = await started();
    // One cifar10 every 15 s for the 42 hours before the record, then a job of the service's own.
    const arrivals = Array.from({ length: BOUNDS.historyArrivals }, (_, k) => ({
      className: 'cifar10',
      submittedAt: T0 - 60_000 - k * 15_000,
    }));
    expect((await a.request('POST', '/v1/history', { arrivals })).status).toBe(200);
    a.clock.t = T0 + HOUR;
    expect((await a.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    const exported = await a.boa(['history', 'export']);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout.trim().split('\n')).toHaveLength(1 + BOUNDS.historyArrivals + 1);

    const b = await startCliService({ clock: new ManualClock(T0 + 2 * HOUR) });
    cleanups.push(b.close);
    const file = join(b.cwd, 'a.csv');
    writeFileSync(file, exported.stdout);
    const run = await b.boa(['history', 'import', file]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /a\.csv: imported 10000 arrivals as #1, .*\n {2}1 oldest left out: one import takes the newest 10,000, the most the rate estimator keeps\n/,
    );
    // The newest: the oldest import arrival goes; observation starts at the first one kept.
    const newest = stored(a).slice(1);
    expect(stored(b)).toEqual(newest);
    const first = T0 - 60_000 - (BOUNDS.historyArrivals - 2) * 15_000;
    expect((await b.request('GET', '/v1/history')).body.observedSince).toBe(
      new Date(first - 1).toISOString(),
    );
    // Run again, the same file is the same import.
    expect((await b.boa(['history', 'import', file])).stdout).toMatch(
      /imported before, as #1; nothing changed/,
    );
  });

  it('takes as many arrivals in one import as the API does', () => {
    expect(MAX_IMPORT_ARRIVALS).toBe(BOUNDS.historyArrivals);
  });

  it('names what is wrong with a file, before sending anything', async () => {
    const s = await started();
    const write = (name: string, text: string) => {
      writeFileSync(join(s.cwd, name), text);
      return join(s.cwd, name);
    };
    const cases: Array<[string, RegExp]> = [
      [write('other.csv', 'a,b\n1,2\n'), /not a history file: its header must be .*got "a,b"/],
      [
        write('bad-time.csv', 'class,submitted_at\ncifar10,yesterday\n'),
        /bad-time\.csv line 2: submitted_at must be a date and time that exist, in ISO 8601/,
      ],
      // Date.parse would roll these over to March 2 and May 1: refused, not moved.
      [
        write('no-such-day.csv', 'class,submitted_at\ncifar10,2026-02-30T09:00:00Z\n'),
        /no-such-day\.csv line 2: submitted_at must be a date and time that exist/,
      ],
      [
        write('no-such-day-2.csv', 'class,submitted_at\ncifar10,2026-04-31T23:59:00+05:00\n'),
        /no-such-day-2\.csv line 2: submitted_at must be a date and time that exist/,
      ],
      // The line in the file, blank lines counted: what an editor's "go to line" finds.
      [
        write('blank-line.csv', 'class,submitted_at\ncifar10,1793400000000\n\ncifar10,soon\n'),
        /blank-line\.csv line 4: submitted_at must be/,
      ],
      // A row short of a cell: which row and what it lacks, not "not a CSV file".
      [
        write('short-row.csv', 'class,submitted_at\ncifar10,1793400000000\nbert\n'),
        /short-row\.csv line 3 \(class "bert"\): 1 cell\(s\), expected 2, one per header column \(class,submitted_at\); the row reads "bert"/,
      ],
      [
        write('no-zone.csv', 'class,submitted_at\ncifar10,2026-10-31T09:00:00\n'),
        /no-zone\.csv line 2: submitted_at must be/,
      ],
      [
        write('bad-trace.csv', 'name,time,application,num_replicas,batch_size\nx,-5,cifar10,1,1\n'),
        /time must be a non-negative number/,
      ],
      [join(s.cwd, 'absent.csv'), /cannot read .*absent\.csv: no such file/],
    ];
    for (const [file, message] of cases) {
      const run = await s.boa(['history', 'import', file]);
      expect(run.status, file).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    expect((await s.boa(['history', 'import', cases[0]![0], '--gap-hours', '0'])).stderr).toMatch(
      /--gap-hours must be at least a minute \(0\.0167 hours\), got 0\n/,
    );
    expect((await s.boa(['history', 'delete', 'x'])).status).toBe(2);
    expect(stored(s)).toEqual([]);
  });

  it('says what a delete took back, one arrival or several', async () => {
    const s = await started();
    const one = join(s.cwd, 'one.csv');
    writeFileSync(one, `class,submitted_at\ncifar10,${T0 - HOUR}\n`);
    const two = join(s.cwd, 'two.csv');
    writeFileSync(two, `class,submitted_at\nbert,${T0 - 3 * HOUR}\nbert,${T0 - 2 * HOUR}\n`);
    for (const file of [one, two]) expect((await s.boa(['history', 'import', file])).status).toBe(0);
    const first = await s.boa(['history', 'delete', '1']);
    expect(first.stdout).toBe(
      'history import 1 deleted (1 arrival from one.csv); the next plan leaves it out\n',
    );
    const second = await s.boa(['history', 'delete', '2']);
    expect(second.stdout).toBe(
      'history import 2 deleted (2 arrivals from two.csv); the next plan leaves them out\n',
    );
  });
});
