/**
 * npm run -s profiles -- --data data/pollux [--epochs N] [--apps a,b] [--out FILE]
 *
 * Derives one job-class profile per app from the measured traces (ground-truth goodput, best batch per
 * width and data epoch), validates it against the public format and writes it (stdout without --out).
 * A summary table goes to stderr.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { type ClassProfile, type ProfileFile, parseProfileFile } from '../src/core/profile.ts';
import { APP_NAMES, APP_SPECS, isAppName } from '../src/sim/truth/apps.ts';
import { DEFAULT_DERIVE, type DerivedEpoch, deriveClassProfile } from '../src/sim/truth/derive.ts';
import { listTraceApps, loadAppTables } from '../src/sim/truth/load.ts';
import { createJobTruth } from '../src/sim/truth/model.ts';
import { formatProfileJson } from '../src/sim/truth/profile-json.ts';
import { checkOut, stopQuietlyWhenReaderStops, UsageError, writeProblem } from './lib/inputs.ts';
import { writeOutputFiles } from './lib/output-files.ts';

export interface ProfilesArgs {
  readonly data: string;
  readonly epochs: number;
  readonly apps: readonly string[] | undefined;
  readonly out: string | undefined;
}

export interface SummaryRow {
  readonly app: string;
  readonly epochs: number;
  readonly oneGpuHours: number;
  readonly first: ClassProfile['epochs'][number];
  readonly last: ClassProfile['epochs'][number];
}

function parseEpochs(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`--epochs must be a positive integer, got "${value}"`);
  }
  return n;
}

function parseApps(value: string): string[] {
  const apps = value
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (apps.length === 0) throw new InvalidArgumentError('--apps needs at least one app name');
  return apps;
}

export function parseArgs(argv: readonly string[], writeErr: (s: string) => void = () => {}): ProfilesArgs {
  const program = new Command('profiles')
    .description('Derive job-class profiles (version 1) from the measured Pollux traces.')
    .requiredOption('--data <dir>', 'data folder holding traces/<app>/ (e.g. data/pollux)')
    .option(
      '--epochs <n>',
      'statistical epochs per class (fewer if the app has fewer data epochs)',
      parseEpochs,
    )
    .option(
      '--apps <list>',
      `comma-separated apps (default: every app in the data; known: ${APP_NAMES.join(', ')})`,
      parseApps,
    )
    .option('--out <file>', 'output file (default: stdout)')
    .exitOverride()
    .configureOutput({ writeErr, writeOut: writeErr });
  program.parse([...argv], { from: 'user' });
  const opts = program.opts<{ data: string; epochs?: number; apps?: string[]; out?: string }>();
  return { data: opts.data, epochs: opts.epochs ?? DEFAULT_DERIVE.epochs, apps: opts.apps, out: opts.out };
}

function summaryRow(app: string, profile: ClassProfile, epochs: readonly DerivedEpoch[]): SummaryRow {
  const oneGpu = epochs.reduce((sum, e) => sum + (e.seconds.get(1) as number), 0);
  const first = profile.epochs[0] as SummaryRow['first'];
  const last = profile.epochs[profile.epochs.length - 1] as SummaryRow['last'];
  return { app, epochs: profile.epochs.length, oneGpuHours: oneGpu / 3600, first, last };
}

/** Loads every requested app, derives its class and validates the whole file. */
export function buildProfiles(args: ProfilesArgs): { file: ProfileFile; summary: SummaryRow[] } {
  if (!existsSync(args.data)) throw new UsageError(`data folder not found: ${args.data}`);
  const apps = args.apps ?? listTraceApps(args.data);
  if (apps.length === 0) throw new UsageError(`no traces/<app>/placements.csv under ${args.data}`);
  const options = { ...DEFAULT_DERIVE, epochs: args.epochs };
  const classes: ClassProfile[] = [];
  const summary: SummaryRow[] = [];
  for (const app of apps) {
    if (!isAppName(app))
      throw new UsageError(`unknown app "${app}": batch bounds are known for ${APP_NAMES.join(', ')}`);
    const truth = createJobTruth(loadAppTables(args.data, app), APP_SPECS[app]);
    const { profile, epochs } = deriveClassProfile(app, truth, options);
    classes.push(profile);
    summary.push(summaryRow(app, profile, epochs));
  }
  const file = parseProfileFile(
    {
      version: 1,
      instanceType: 'g4dn.12xlarge',
      gpusPerNode: options.gpusPerNode,
      source:
        "Pollux OSDI'21 traces (AdaptDL osdi21-artifact): ground-truth goodput, best batch per width and data " +
        `epoch; up to ${options.epochs} equal-progress statistical epochs of whole data epochs; k GPUs 4 per node`,
      classes,
    },
    'generated profile',
  );
  return { file, summary };
}

export function formatSummary(rows: readonly SummaryRow[]): string {
  const s = (e: SummaryRow['first'], k: number) => (e.speedup[String(k)]?.toFixed(2) ?? '-').padStart(6);
  const head = `${'app'.padEnd(12)}epochs  1-GPU h    first: s4    s16    s64    last: s4    s16    s64`;
  const lines = rows.map(
    (r) =>
      `${r.app.padEnd(12)}${String(r.epochs).padStart(6)}${r.oneGpuHours.toPrecision(4).padStart(9)}    ` +
      `      ${s(r.first, 4)} ${s(r.first, 16)} ${s(r.first, 64)}         ${s(r.last, 4)} ${s(r.last, 16)} ${s(r.last, 64)}`,
  );
  return `${[head, ...lines].join('\n')}\n`;
}

/** Runs the script; returns the exit code. */
export function main(
  argv: readonly string[],
  io: { out: (s: string) => void; err: (s: string) => void } = {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  },
): number {
  try {
    const args = parseArgs(argv, io.err);
    // Before the traces are read (seconds for 1000 epochs), not when the result is written.
    checkOut(args.out);
    const { file, summary } = buildProfiles(args);
    const json = formatProfileJson(file);
    if (args.out === undefined) io.out(json);
    else {
      try {
        writeOutputFiles([[args.out, json]]);
      } catch (error) {
        throw new UsageError(`cannot write ${args.out}: ${writeProblem(error as NodeJS.ErrnoException)}`);
      }
    }
    io.err(formatSummary(summary));
    return 0;
  } catch (err) {
    // Bad input exits 2, as every other script and the CLI (commander alone exits 1).
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    io.err(`profiles: ${(err as Error).message}\n`);
    // A data folder without the measured traces, or with one that does not parse, is bad input too
    // (TraceError): it exited 1, as a bug would.
    return err instanceof UsageError || (err as Error).name === 'TraceError' ? 2 : 1;
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  stopQuietlyWhenReaderStops();
  process.exitCode = main(process.argv.slice(2));
}
