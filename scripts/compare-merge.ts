/**
 * Re-measuring one policy without re-running the field: replaces, in a compare output folder, every
 * series that a second compare output (same trace, same engine) has, and rewrites results.json,
 * results.csv, the charts and at-paid.json (read off at the folder's own paid points).
 *   npm run -s compare-merge -- --into DIR --from NEWDIR [--apps a,b]
 * `--apps` only names the application subset in the chart titles, as compare does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  atPaid,
  atPaidGaps,
  atPaidTable,
  type CompareRow,
  knobLabel,
  seriesOf,
} from './lib/compare-report.ts';
import { atPaidRows, compareRows } from './lib/compare-files.ts';
import { writeRunOutputs } from './lib/compare-output.ts';
import { runMain, UsageError, scriptProgram } from './lib/inputs.ts';

const program = scriptProgram('compare-merge')
  .description("Replace the series a newer compare output has in an older one's folder")
  .requiredOption('--into <dir>', 'compare output folder to update')
  .requiredOption('--from <dir>', 'compare output folder with the re-measured series')
  .option('--apps <list>', 'application subset, for the chart titles');

/** JSON with its keys sorted, so two equal settings read alike whatever order they were given in. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

const readJson = (path: string): unknown => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
};

await runMain(async () => {
  program.parse();
  const opts = program.opts<{ into: string; from: string; apps?: string }>();
  const oldFile = join(opts.into, 'results.json');
  const freshFile = join(opts.from, 'results.json');
  const old = compareRows(readJson(oldFile), oldFile);
  const fresh = compareRows(readJson(freshFile), freshFile);
  const replaced = new Set(fresh.map(seriesOf));
  if (replaced.size === 0) throw new UsageError(`${opts.from}/results.json has no runs`);
  // Runs of another trace or --apps would be read off beside these as if comparable. Only what a row
  // records can be checked: its trace's name, job count and arrival span.
  // (Rows from before compare recorded the trace's name have none; then the shape alone is checked.)
  const namesIn = (rows: readonly CompareRow[]) =>
    new Set(rows.flatMap((r) => (r.trace === undefined ? [] : [r.trace])));
  const oldNames = namesIn(old);
  const otherName = [...namesIn(fresh)].find((name) => oldNames.size > 0 && !oldNames.has(name));
  if (otherName !== undefined) {
    throw new UsageError(
      `${opts.from} has runs of ${otherName}, ${opts.into} of ${[...oldNames].join(' / ')}: ` +
        'merge only runs of the same --trace and --apps',
    );
  }
  const traceOf = (r: CompareRow) =>
    `${r.jobs} jobs over ${Number(r.arrivalSpanHours).toFixed(2)} h of arrivals`;
  const traces = new Set(old.map(traceOf));
  const other = fresh.map(traceOf).find((t) => traces.size > 0 && !traces.has(t));
  if (other !== undefined) {
    throw new UsageError(
      `${opts.from} has runs of ${other}, ${opts.into} of ${[...traces].join(' / ')}: ` +
        'merge only runs of the same --trace and --apps',
    );
  }
  // Runs of another seed or other engine flags (--rescale, --boot, ...) differ in what is compared, not
  // in the policy. Rows from before compare recorded the engine flags have none: those are not checked.
  const mismatch = (what: string, of: (r: CompareRow) => string | undefined) => {
    const olds = new Set(old.flatMap((r) => of(r) ?? []));
    const differing = fresh.flatMap((r) => of(r) ?? []).find((v) => olds.size > 0 && !olds.has(v));
    if (differing !== undefined) {
      throw new UsageError(
        `${opts.from} has runs at ${what} ${differing}, ${opts.into} at ${[...olds].map((v) => `${what} ${v}`).join(' / ')}: ` +
          `merge only runs of the same ${what}`,
      );
    }
  };
  mismatch('seed', (r) => String(r.seed));
  mismatch('engine flags', (r) => (r.engine === undefined ? undefined : canonical(r.engine)));
  // Each replaced series takes the place of its old runs, so tables keep their column order.
  const rows: CompareRow[] = [];
  const placed = new Set<string>();
  for (const row of old) {
    const series = seriesOf(row);
    if (!replaced.has(series)) rows.push(row);
    else if (!placed.has(series)) {
      rows.push(...fresh.filter((r) => seriesOf(r) === series));
      placed.add(series);
    }
  }
  for (const series of replaced)
    if (!placed.has(series)) rows.push(...fresh.filter((r) => seriesOf(r) === series));
  // The same run twice (rows joined by hand twice) draws every point twice and hides the slip.
  const runs = new Set<string>();
  for (const row of rows) {
    const run = `${seriesOf(row)} at ${knobLabel(row)}`;
    if (runs.has(run)) {
      const where = replaced.has(seriesOf(row)) ? opts.from : opts.into;
      throw new UsageError(`${where}/results.json has ${run} twice: keep one run per value of a knob`);
    }
    runs.add(run);
  }

  // Read before anything is written: an unreadable one must leave the folder as it was. A folder
  // compare wrote without --at-paid has none, and its runs are merged alone.
  const atPaidFile = join(opts.into, 'at-paid.json');
  const points = existsSync(atPaidFile)
    ? atPaidRows(readJson(atPaidFile), atPaidFile).map((row) => ({
        paid: row.paidGpuHoursPerHour,
        ...(row.minimumMultiple === undefined ? {} : { minimumMultiple: row.minimumMultiple }),
      }))
    : undefined;
  const table = points === undefined ? undefined : atPaid(rows, points);
  await writeRunOutputs(
    opts.into,
    rows,
    opts.apps,
    points,
    table === undefined ? undefined : `${JSON.stringify(table, null, 2)}\n`,
  );
  process.stdout.write(`replaced ${[...replaced].join(', ')} in ${opts.into}\n`);
  if (table === undefined) {
    process.stdout.write(`(no at-paid.json in ${opts.into}: no paid points to read the runs off at)\n`);
    return;
  }
  process.stdout.write(atPaidTable(table));
  process.stdout.write(atPaidGaps(rows, table));
});
