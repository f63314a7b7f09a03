/**
 * The files `boa history import` reads, told apart by their header:
 * - a workload trace (the Pollux/Sia CSV format: name,time,application,num_replicas,batch_size), whose
 *   times are seconds from its start: it is placed in time by the command;
 * - a job log (a CSV with columns class and submitted_at, ISO 8601 with an offset or ms since the
 *   epoch), whose times are absolute: what an old scheduler's records give.
 */
import { parse } from 'csv-parse/sync';
import { type CsvParseError, csvProblem } from '../core/csv-problem.ts';
import { parseTrace, TraceError } from '../core/trace.ts';
import { usageError } from './errors.ts';
import { readTextFile } from './parse.ts';

/**
 * The most arrivals one import takes: BOUNDS.historyArrivals (src/api/bounds.ts, not imported here: it
 * loads zod), and the most the rate estimator keeps within its reach.
 */
export const MAX_IMPORT_ARRIVALS = 10_000;

export type HistoryFile =
  | { kind: 'trace'; jobs: Array<{ className: string; seconds: number }> }
  | { kind: 'log'; arrivals: Array<{ className: string; submittedAt: number }> };

const LOG_COLUMNS = ['class', 'submitted_at'];
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export function readHistoryFile(path: string): HistoryFile {
  // A byte order mark (Excel's "CSV UTF-8") would join the first column's name: "\uFEFFclass".
  const text = readTextFile(path).replace(/^\uFEFF/, '');
  const header = (text.split(/\r?\n/, 1)[0] ?? '').split(',').map((c) => c.trim());
  if (header.includes('application') && header.includes('time')) return traceFile(text, path);
  if (LOG_COLUMNS.every((c) => header.includes(c))) return logFile(text, path);
  throw usageError(
    `${path}: not a history file: its header must be a workload trace's (name,time,application,` +
      `num_replicas,batch_size) or a job log's (class,submitted_at), got "${header.join(',')}"`,
  );
}

function traceFile(text: string, path: string): HistoryFile {
  try {
    const jobs = parseTrace(text, path).map((j) => ({ className: j.application, seconds: j.time }));
    return { kind: 'trace', jobs };
  } catch (error) {
    if (error instanceof TraceError) throw usageError(error.message);
    throw error;
  }
}

function logFile(text: string, path: string): HistoryFile {
  let rows: Array<{ record: Record<string, string>; info: { lines: number } }>;
  let names: string[] = [];
  try {
    // info: each row's line in the file as an editor numbers it: blank lines are skipped but counted.
    const columns = (line: string[]) => (names = line);
    rows = parse(text, { columns, skip_empty_lines: true, trim: true, info: true });
  } catch (error) {
    throw usageError(csvProblem(error as CsvParseError, names, path, 'class'));
  }
  if (rows.length === 0) throw usageError(`${path}: no arrivals (a header class,submitted_at and rows)`);
  const arrivals = rows.map(({ record: row, info }) => {
    const where = `${path} line ${info.lines}`;
    if (!row.class) throw usageError(`${where}: class is empty`);
    return { className: row.class, submittedAt: instant(row.submitted_at ?? '', where) };
  });
  return { kind: 'log', arrivals };
}

function instant(value: string, where: string): number {
  const ms = /^\d+$/.test(value)
    ? Number(value)
    : ISO_WITH_OFFSET.test(value) && realDateTime(value)
      ? Date.parse(value)
      : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw usageError(
      `${where}: submitted_at must be a date and time that exist, in ISO 8601 with its offset (2026-11-27T09:30:00Z), or ms since ` +
        `the epoch, got "${value}"`,
    );
  }
  return ms;
}

/**
 * The date and time a matching ISO string names exist: Date.parse rolls an impossible one over
 * (2026-02-30 reads as March 2), which would move an arrival by days without a word.
 */
function realDateTime(value: string): boolean {
  const [date = '', rest = ''] = value.split('T');
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second = 0] = (/^[\d:.]+/.exec(rest)?.[0] ?? '').split(':').map(Number);
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value);
  const calendar = new Date(Date.UTC(year, month - 1, day));
  return (
    calendar.getUTCFullYear() === year &&
    calendar.getUTCMonth() === month - 1 &&
    calendar.getUTCDate() === day &&
    (hour ?? 99) <= 23 &&
    (minute ?? 99) <= 59 &&
    second < 60 &&
    (offset === null || (Number(offset[2]) <= 23 && Number(offset[3]) <= 59))
  );
}

/**
 * A trace's jobs as arrivals whose last is `gapMs` before `before` (the start of what the service has
 * observed), the trace's spacing kept: back to back before the service's own days, as `compare
 * --history` places them.
 */
export function placeTrace(
  jobs: ReadonlyArray<{ className: string; seconds: number }>,
  before: number,
  gapMs: number,
): Array<{ className: string; submittedAt: number }> {
  const last = jobs.reduce((latest, j) => Math.max(latest, j.seconds), Number.NEGATIVE_INFINITY);
  return jobs.map((j) => ({
    className: j.className,
    submittedAt: Math.round(before - gapMs - (last - j.seconds) * 1000),
  }));
}

/**
 * The newest `max` arrivals, and how many older ones are left out: a file with more than one import
 * takes (an export of a busy service) still imports the ones the estimator would read. The import's
 * observed span then starts at its first arrival, so the hours of those left out do not count as quiet.
 */
export function newestArrivals<T extends { submittedAt: number }>(
  arrivals: readonly T[],
  max = MAX_IMPORT_ARRIVALS,
): { sent: T[]; older: number } {
  if (arrivals.length <= max) return { sent: [...arrivals], older: 0 };
  const sorted = [...arrivals].sort((a, b) => a.submittedAt - b.submittedAt);
  return { sent: sorted.slice(-max), older: arrivals.length - max };
}
