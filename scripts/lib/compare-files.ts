import type { AtPaidRow, CompareRow } from './compare-report.ts';
import { UsageError } from './inputs.ts';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Another file in a compare folder's place: a results.json of `{}` ended compare-merge and
 * comparison-table with a TypeError's stack trace, and `[1]` was merged and written back as a run.
 */
function listOf<T>(
  json: unknown,
  path: string,
  what: string,
  isEntry: (entry: Record<string, unknown>) => boolean,
  expected: string,
): T[] {
  if (!Array.isArray(json)) throw new UsageError(`${path} is not compare's ${what}: expected a list`);
  json.forEach((entry, i) => {
    if (!isObject(entry) || !isEntry(entry))
      throw new UsageError(`${path}: entry ${i + 1} is not one of compare's (expected ${expected})`);
  });
  return json as T[];
}

/** compare's results.json: its runs, each naming its policy (what every reader keys them by). */
export function compareRows(json: unknown, path: string): CompareRow[] {
  return listOf<CompareRow>(
    json,
    path,
    'results.json',
    (run) => typeof run.policy === 'string',
    'a run naming its policy',
  );
}

/** compare's at-paid.json: a row per paid point, each with its series' metrics. */
export function atPaidRows(json: unknown, path: string): AtPaidRow[] {
  return listOf<AtPaidRow>(
    json,
    path,
    'at-paid.json',
    (row) => typeof row.paidGpuHoursPerHour === 'number' && isObject(row.metrics),
    'a row with paidGpuHoursPerHour and metrics',
  );
}
