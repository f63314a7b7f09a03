import { parse } from 'csv-parse/sync';
import { SECONDS_PER_HOUR } from './units.ts';
import { type CsvParseError, csvProblem } from './csv-problem.ts';

/** One job of a workload trace (the Pollux workload CSV format). */
export interface TraceJob {
  readonly name: string;
  /** Arrival, seconds from the trace's start. */
  readonly time: number;
  readonly application: string;
  /** The user's original request; only reservation baselines use these. */
  readonly numReplicas: number;
  readonly batchSize: number;
  /** Optional `deadline` column: absolute, seconds from the trace's start (the simulator generates one otherwise). */
  readonly deadline?: number;
  /** Optional `kind` column: the user's interactive/batch label (the simulator derives one otherwise). */
  readonly kind?: 'interactive' | 'batch';
}

export class TraceError extends Error {
  override name = 'TraceError';
}

const COLUMNS = ['name', 'time', 'application', 'num_replicas', 'batch_size'] as const;

/**
 * The most GPUs a trace's job may ask for. Policies that read the request loop over its widths: one
 * asking 1e9 held cornucopia's simulation without end (a million took 21 s a job).
 */
export const MAX_NUM_REPLICAS = 100_000;

/** The latest arrival a trace may have: one at 1e20 s ended boa's run in a fatal V8 error and held fixed-request's. */
export const MAX_ARRIVAL_SECONDS = 1e9;

// Decimal only: Number() also reads 0x10, 0b11 and 0o7, which no trace means.
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The number a cell writes in decimal, or NaN. */
function decimal(cell: string): number {
  return DECIMAL.test(cell) ? Number(cell) : Number.NaN;
}

/** The header, refused when it names a column twice: csv-parse would keep the last silently. */
function header(names: string[], origin: string): string[] {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new TraceError(`${origin}: the header names column "${name}" twice`);
    seen.add(name);
  }
  return names;
}

/** Parses a workload CSV (`name,time,application,num_replicas,batch_size`), sorted by arrival. */
export function parseTrace(csv: string, origin = 'trace'): TraceJob[] {
  let parsed: Array<{ record: Record<string, string>; info: { lines: number } }>;
  let names: string[] = [];
  try {
    // bom: a file saved as Excel's "CSV UTF-8" starts with one, which read as part of the first column's
    // name ("\uFEFFname") and the file was refused for a missing column `name` it visibly has.
    // Line ends made \n first: csv-parse counts a CRLF inside a quoted field as two lines.
    parsed = parse(csv.replace(/\r\n?/g, '\n'), {
      bom: true,
      columns: (line: string[]) => (names = header(line, origin)),
      skip_empty_lines: true,
      trim: true,
      info: true,
    });
  } catch (error) {
    if (error instanceof TraceError) throw error;
    throw new TraceError(csvProblem(error as CsvParseError, names, origin, 'name'));
  }
  const rows = parsed.map((p) => p.record);
  const first = rows[0];
  if (!first) throw new TraceError(`${origin}: no jobs (expected a header ${COLUMNS.join(',')} and rows)`);
  const missing = COLUMNS.filter((c) => !(c in first));
  // The header as read: a file without one had its first job taken as the header, and a header in
  // another case or with another separator was refused for columns it visibly has.
  if (missing.length) {
    throw new TraceError(
      `${origin}: missing column(s) ${missing.join(', ')}; the header line reads "${names.join(',')}" ` +
        `(expected a first line naming ${COLUMNS.join(',')}, in any order, in lower case, comma-separated)`,
    );
  }
  const jobs = rows.map((row, i) => {
    // The file's own line, where the row starts: not i + 2, which blank lines and a quoted field over
    // several lines above it shifted. csv-parse gives the line the row ends on.
    const newlines = Object.values(row).reduce((n, v) => n + v.split('\n').length - 1, 0);
    const line = (parsed[i] as (typeof parsed)[number]).info.lines - newlines;
    // A request is a count of GPUs and examples: 0 of either is no request (the simulator ran it anyway).
    const number = (column: (typeof COLUMNS)[number], integer: boolean) => {
      const value = decimal(row[column] ?? '');
      if (
        row[column] === '' ||
        !Number.isFinite(value) ||
        (integer ? !(Number.isInteger(value) && value >= 1) : value < 0)
      ) {
        throw new TraceError(
          `${origin} line ${line}: ${column} must be a ${integer ? 'positive integer' : 'non-negative number'}, got "${row[column]}"`,
        );
      }
      return value;
    };
    if (!row.application) throw new TraceError(`${origin} line ${line}: application is empty`);
    const time = number('time', false);
    if (time > MAX_ARRIVAL_SECONDS) {
      throw new TraceError(
        `${origin} line ${line}: time must be at most ${MAX_ARRIVAL_SECONDS} seconds (about 31 years), got "${row.time}"`,
      );
    }
    const numReplicas = number('num_replicas', true);
    if (numReplicas > MAX_NUM_REPLICAS) {
      throw new TraceError(
        `${origin} line ${line}: num_replicas must be at most ${MAX_NUM_REPLICAS} GPUs, got "${row.num_replicas}"`,
      );
    }
    const job: TraceJob = {
      name: row.name ?? `job-${i}`,
      time,
      application: row.application,
      numReplicas,
      batchSize: number('batch_size', true),
    };
    return { ...job, ...optionalColumns(row, job.time, `${origin} line ${line}`) };
  });
  return jobs.sort((a, b) => a.time - b.time);
}

/** The optional `deadline` and `kind` columns; an empty cell means none given. */
function optionalColumns(
  row: Record<string, string>,
  time: number,
  where: string,
): Pick<TraceJob, 'deadline' | 'kind'> {
  const out: { deadline?: number; kind?: 'interactive' | 'batch' } = {};
  const deadline = row.deadline?.trim();
  if (deadline) {
    const value = decimal(deadline);
    if (!Number.isFinite(value) || value < time) {
      throw new TraceError(
        `${where}: deadline must be a number of seconds at or after the arrival (${time}), got "${deadline}"`,
      );
    }
    out.deadline = value;
  }
  const kind = row.kind?.trim();
  if (kind) {
    if (kind !== 'interactive' && kind !== 'batch') {
      throw new TraceError(`${where}: kind must be interactive or batch, got "${kind}"`);
    }
    out.kind = kind;
  }
  return out;
}

/**
 * Rates are per hour, so a trace whose arrivals span less than an hour (one job, a batch submitted at
 * once) is read as that hour's arrivals: its rates are its jobs per hour, its minimum budget the
 * GPU-hours of its cheapest plan, and the spend yardstick its GPU-hours paid (src/sim/engine/metrics.ts).
 */
export const MIN_TRACE_SPAN_HOURS = 1;

/** The hours a trace's rates and spend are read over: first to last arrival, at least an hour. */
export function traceSpanHours(jobs: readonly TraceJob[]): number {
  if (jobs.length === 0) throw new TraceError('the trace has no jobs');
  const span = ((jobs[jobs.length - 1] as TraceJob).time - (jobs[0] as TraceJob).time) / SECONDS_PER_HOUR;
  return Math.max(MIN_TRACE_SPAN_HOURS, span);
}

/**
 * Arrival rate per class: its jobs / the whole trace's span (first to last arrival, at least an hour).
 * The span is the whole file's, so filtering classes afterwards does not change the others' rates.
 */
export function arrivalRatesPerHour(
  jobs: readonly TraceJob[],
  apps?: readonly string[],
): Record<string, number> {
  const span = traceSpanHours(jobs);
  const counts: Record<string, number> = {};
  for (const job of jobs) counts[job.application] = (counts[job.application] ?? 0) + 1;
  if (apps) {
    const unknown = apps.filter((a) => !(a in counts));
    if (unknown.length) {
      throw new TraceError(
        `no jobs of ${unknown.join(', ')} in the trace; it has: ${Object.keys(counts).sort().join(', ')}`,
      );
    }
  }
  const keep = apps ?? Object.keys(counts).sort();
  return Object.fromEntries(keep.map((app) => [app, (counts[app] as number) / span]));
}
