import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CompareRow, compareCsv, type PaidPoint } from './compare-report.ts';
import { jctChart } from './jct-chart.ts';
import { UsageError } from './inputs.ts';

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
 * subset; `points`, the at-paid reading points, are marked on them.
 */
export async function writeRunOutputs(
  dir: string,
  rows: readonly CompareRow[],
  apps?: string,
  points: readonly PaidPoint[] = [],
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(rows, null, 2)}\n`);
  writeFileSync(join(dir, 'results.csv'), compareCsv(rows));
  const trace = rows.find((row) => row.trace !== undefined)?.trace;
  const what = `${trace ? `: ${trace}` : ''}${apps ? ` (${apps})` : ''}`;
  writeFileSync(
    join(dir, 'avg-jct.svg'),
    await jctChart(rows, 'avg', `Average JCT vs paid GPU-hours per hour${what}`, points),
  );
  writeFileSync(
    join(dir, 'p95-jct.svg'),
    await jctChart(rows, 'p95', `P95 JCT vs paid GPU-hours per hour${what}`, points),
  );
}
