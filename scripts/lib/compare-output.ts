import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CompareRow, compareCsv, jctChart } from './compare-report.ts';

/**
 * A compare output folder's runs: results.json, results.csv and the two JCT charts (compare writes
 * them, compare-merge rewrites them). `apps` only names the application subset in the chart titles.
 */
export async function writeRunOutputs(
  dir: string,
  rows: readonly CompareRow[],
  apps?: string,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(rows, null, 2)}\n`);
  writeFileSync(join(dir, 'results.csv'), compareCsv(rows));
  const what = apps ? ` (${apps})` : '';
  writeFileSync(
    join(dir, 'avg-jct.svg'),
    await jctChart(rows, 'avg', `Average JCT vs paid GPU-hours per hour${what}`),
  );
  writeFileSync(
    join(dir, 'p95-jct.svg'),
    await jctChart(rows, 'p95', `P95 JCT vs paid GPU-hours per hour${what}`),
  );
}
