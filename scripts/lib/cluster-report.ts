/**
 * compare on given node pools (`--cluster`): a fixed-cluster policy runs once on them (its budget is
 * their GPUs), and the issue-13 metrics are printed per run: JCT, tail (p99) JCT, deadline satisfaction,
 * interactive queueing (Cornucopia's metric) and utilization per GPU type.
 */
import { type CompareRow, type CompareTask, knobLabel } from './compare-report.ts';

/** Keeps one run per fixed-cluster series (the budget is the cluster's); the others sweep as usual. */
export function oneRunPerFixedSeries(
  tasks: readonly CompareTask[],
  isFixed: (policy: string) => boolean,
): CompareTask[] {
  const seen = new Set<string>();
  return tasks.filter((task) => {
    if (!isFixed(task.policy)) return true;
    const series = task.label ?? task.policy;
    if (seen.has(series)) return false;
    seen.add(series);
    return true;
  });
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a');
const secs = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');

/** One line per run, for people. */
export function clusterMetricsTable(rows: readonly CompareRow[]): string {
  const header = [
    'series',
    'knob',
    'done',
    'avg JCT s',
    'p99 JCT s',
    'deadlines met',
    'interactive queue s',
    'utilization',
  ];
  const lines = rows.map((r) => [
    r.label ?? r.policy,
    knobLabel(r),
    `${r.completed}/${r.jobs}`,
    secs(r.avgJctSeconds),
    secs(r.p99JctSeconds),
    pct(r.deadlineSatisfactionRate),
    `${secs(r.avgInteractiveQueueSeconds)} (${r.interactiveJobs} jobs)`,
    Object.entries(r.utilizationByType)
      .map(([type, u]) => `${type} ${pct(u)}`)
      .join(' '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[fmt(header), ...lines.map(fmt)].join('\n')}\n`;
}
