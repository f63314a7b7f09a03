/** compare's outputs: the result rows (each with the knob swept), as CSV, and the two charts. */
import type { TopLevelSpec } from 'vega-lite';
import { chartFrame, renderSvg } from '../../src/charts/render.ts';
import type { PolicyDefinition, PolicyOptions } from '../../src/sim/policy.ts';
import { jctAtPaid } from '../../src/sim/matched.ts';
import type { SimResult } from '../../src/sim/run.ts';

export type CompareRow = SimResult & { readonly knob: 'budget' | 'target' };

export interface CompareTask {
  readonly policy: string;
  readonly options: PolicyOptions;
}

/** One run per policy and value of its knob: budgets for budget policies, targets for target ones. */
export function compareTasks(
  definitions: readonly PolicyDefinition[],
  budgets: readonly number[],
  targets: readonly number[],
  shared: PolicyOptions = {},
): CompareTask[] {
  return definitions.flatMap((d) =>
    (d.knob === 'budget' ? budgets : targets).map((value) => ({
      policy: d.name,
      options: { ...shared, [d.knob]: value },
    })),
  );
}

export interface AtPaidRow {
  readonly paidGpuHoursPerHour: number;
  /** Per policy: average JCT interpolated at that paid usage; null where its runs do not bracket it. */
  readonly avgJctSeconds: Record<string, number | null>;
}

/** Every policy at the same spend: the comparison the charts show, read off at given paid usages. */
export function atPaid(rows: readonly CompareRow[], paids: readonly number[]): AtPaidRow[] {
  const complete = rows.filter((r) => r.completed === r.jobs);
  const policies = [...new Set(rows.map((r) => r.policy))];
  return paids.map((paid) => ({
    paidGpuHoursPerHour: paid,
    avgJctSeconds: Object.fromEntries(
      policies.map((p) => [
        p,
        jctAtPaid(
          complete.filter((r) => r.policy === p),
          paid,
        ),
      ]),
    ),
  }));
}

/** The same as a text table: one row per paid usage, one column per policy, seconds. */
export function atPaidTable(table: readonly AtPaidRow[]): string {
  if (table.length === 0) return '';
  const policies = Object.keys((table[0] as AtPaidRow).avgJctSeconds);
  const header = ['paid', ...policies];
  const lines = table.map((row) => [
    String(row.paidGpuHoursPerHour),
    ...policies.map((p) => {
      const v = row.avgJctSeconds[p];
      return v === null || v === undefined ? '-' : v.toFixed(0);
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
  return `${['average JCT (s) at a matched paid usage (GPU-hours/hour)', format(header), ...lines.map(format)].join('\n')}\n`;
}

export function compareCsv(rows: readonly CompareRow[]): string {
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0] as CompareRow) as Array<keyof CompareRow>;
  const cell = (v: unknown) =>
    v === null || (typeof v === 'number' && !Number.isFinite(v)) ? '' : String(v);
  return `${[columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n')}\n`;
}

/**
 * JCT (average or P95) against paid GPU-hours per hour, one line per policy, as in the BOA paper's
 * Figures 4 and 6: every policy is placed by what it actually paid, whatever its knob.
 */
export function jctChart(rows: readonly CompareRow[], metric: 'avg' | 'p95', title: string): Promise<string> {
  const field = metric === 'avg' ? 'avgJctSeconds' : 'p95JctSeconds';
  const values = rows
    .filter((r) => r.completed === r.jobs && Number.isFinite(r[field]))
    .map((r) => ({
      policy: r.policy,
      paid: r.paidGpuHoursPerHour,
      jctMinutes: r[field] / 60,
      knob: r.knob === 'budget' ? `budget ${r.budget}` : `target ${r.target}`,
    }))
    .sort((a, b) => a.policy.localeCompare(b.policy) || a.paid - b.paid);
  const spec: TopLevelSpec = {
    ...chartFrame(title),
    data: { values },
    mark: { type: 'line', point: { size: 30 } },
    encoding: {
      x: { field: 'paid', type: 'quantitative', title: 'Paid GPU-hours per hour', scale: { zero: false } },
      y: {
        field: 'jctMinutes',
        type: 'quantitative',
        title: `${metric === 'avg' ? 'Average' : 'P95'} job completion time (minutes, log scale)`,
        scale: { type: 'log' },
      },
      order: { field: 'paid', type: 'quantitative' },
      color: { field: 'policy', type: 'nominal', title: 'Policy' },
      tooltip: [{ field: 'policy' }, { field: 'knob' }, { field: 'paid' }, { field: 'jctMinutes' }],
    },
  };
  return renderSvg(spec);
}
