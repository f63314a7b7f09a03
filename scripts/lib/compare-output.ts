import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type CompareRow, compareCsv, type PaidPoint } from './compare-report.ts';
import { jctChart } from './jct-chart.ts';
import { UsageError } from './inputs.ts';
import { writeOutputFiles } from './output-files.ts';

/**
 * Makes the output folder before any run: a path that cannot be one (a file, say) is refused now, not
 * after minutes of simulation whose results then had nowhere to go.
 */
export function prepareOutDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST'
        ? 'it is a file; give a folder'
        : code === 'ENOTDIR'
          ? 'a part of its path is a file, not a folder'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : (code ?? (error as Error).message);
    throw new UsageError(`--out ${dir}: cannot make the output folder: ${why}`);
  }
}

/**
 * A compare output folder's runs: results.json, results.csv and the two JCT charts (compare writes
 * them, compare-merge rewrites them). The charts' titles name the rows' trace and `apps`, the application
 * subset; `points`, the at-paid reading points, are marked on them. `atPaidTable` is at-paid.json's text,
 * or null to remove an earlier run's (undefined leaves it alone). All are made before any is written,
 * and written all or none: the folder never holds some files of this run beside others of an earlier one.
 */
export async function writeRunOutputs(
  dir: string,
  rows: readonly CompareRow[],
  apps?: string,
  points: readonly PaidPoint[] = [],
  atPaidTable?: string | null,
): Promise<void> {
  const trace = rows.find((row) => row.trace !== undefined)?.trace;
  const what = `${trace ? `: ${trace}` : ''}${apps ? ` (${apps})` : ''}`;
  const avg = await jctChart(rows, 'avg', `Average JCT vs paid GPU-hours per hour${what}`, points);
  const p95 = await jctChart(rows, 'p95', `P95 JCT vs paid GPU-hours per hour${what}`, points);
  mkdirSync(dir, { recursive: true });
  writeOutputFiles([
    [join(dir, 'results.json'), `${JSON.stringify(rows, null, 2)}\n`],
    [join(dir, 'results.csv'), compareCsv(rows)],
    [join(dir, 'avg-jct.svg'), avg],
    [join(dir, 'p95-jct.svg'), p95],
    ...(atPaidTable === undefined ? [] : [[join(dir, 'at-paid.json'), atPaidTable] as const]),
  ]);
}
