/** compare's outputs: the result rows (each with the knob swept), read off at paid points, and as CSV. */
import type { PolicyDefinition, PolicyOptions } from '../../src/sim/policy.ts';
import { jctAtPaid, metricsAtPaid, type RunMetricsAtPaid } from '../../src/sim/matched.ts';
import type { SimResult } from '../../src/sim/run.ts';
import { boaPriceVariant, boaVariant, PolicyVariantError, polluxVariant } from './boa-variants.ts';
import { variantRefusal } from './variant-refusal.ts';

/** A run as compare reports it: the knob swept, and the series it belongs to (`label`). */
export type CompareRow = SimResult & {
  readonly knob: PolicyDefinition['knob'];
  readonly label?: string;
  /** The trace file's name without its folder and extension, for the charts' titles. */
  readonly trace?: string;
  /** The engine flags the run was made with ({}: the defaults), so merged runs can be checked alike. */
  readonly engine?: Readonly<Record<string, unknown>>;
};

/** The knob a run was made at, as people read it: `budget 40`, `target 0.8`, `price 0.5`. */
export function knobLabel(row: Pick<CompareRow, 'knob' | 'budget' | 'target' | 'price'>): string {
  return `${row.knob} ${row[row.knob]}`;
}

/** The values each knob is swept over. */
export type KnobValues = Readonly<Record<PolicyDefinition['knob'], readonly number[]>>;

export interface CompareTask {
  readonly policy: string;
  readonly options: PolicyOptions;
  /** The series name in tables and charts when it is not the policy's (an oracle or a variant). */
  readonly label?: string;
}

/** A policy to sweep: its definition, options of its own, and a label when those make it a variant. */
export interface CompareEntry {
  readonly definition: PolicyDefinition;
  readonly options?: PolicyOptions;
  readonly label?: string;
}

/** One run per policy and value of its knob: its budgets, targets or prices. */
export function compareTasks(
  entries: ReadonlyArray<PolicyDefinition | CompareEntry>,
  knobs: KnobValues,
  shared: PolicyOptions = {},
): CompareTask[] {
  return entries.flatMap((entry) => {
    const e: CompareEntry = 'definition' in entry ? entry : { definition: entry };
    const d = e.definition;
    return knobs[d.knob].map((value) => ({
      policy: d.name,
      options: { ...shared, ...e.options, [d.knob]: value },
      ...(e.label ? { label: e.label } : {}),
    }));
  });
}

/**
 * `--policies` entries: a policy name, or boa with variants of its settings (`boa@cap2`, `boa@oracle`,
 * `boa@cap2@conf2`: boa-variants.ts), labelled with them.
 */
export function parsePolicyEntry(spec: string, find: (name: string) => PolicyDefinition): CompareEntry {
  const [name, ...variants] = spec.split('@');
  const definition = find(name as string);
  if (variants.length === 0) return { definition };
  const parsed = (names: readonly string[]) =>
    definition.name === 'boa'
      ? boaVariant(names)
      : definition.name === 'boa-price'
        ? boaPriceVariant(names)
        : definition.name.startsWith('pollux-')
          ? polluxVariant(definition.name, names)
          : undefined;
  const variant = parsed(variants);
  if (!variant) {
    const alone = (one: string) => parsed([one]) !== undefined;
    throw new PolicyVariantError(variantRefusal(spec, definition.name, alone));
  }
  return { definition, ...variant };
}

/** The series a row belongs to. */
export function seriesOf(row: CompareRow): string {
  // Both use the trace's own rates, which no other policy has: labelled wherever shown.
  const oracle = row.rates === 'oracle' ? 'oracle rates' : row.rates === 'prior' ? 'oracle prior' : undefined;
  // Set by flags, not by the variant, so the label lacks them: a --solver paper series shown and merged
  // as plain "boa" replaced the default's runs (found in a trial). Exact is the default, unlabelled.
  const says = [
    ...(oracle && !row.label?.includes('oracle') ? [oracle] : []),
    ...(row.solver === 'paper' ? ['paper solver'] : []),
  ];
  const name = row.label ?? row.policy;
  if (says.length === 0) return name;
  return name.endsWith(')') ? name.replace(/\)$/, `, ${says.join(', ')})`) : `${name} (${says.join(', ')})`;
}

export interface AtPaidRow {
  readonly paidGpuHoursPerHour: number;
  /** When asked as a multiple of the minimum feasible budget (`1.2x`): that multiple. */
  readonly minimumMultiple?: number;
  /** Per series: average JCT interpolated at that paid usage; null where its runs do not bracket it. */
  readonly avgJctSeconds: Record<string, number | null>;
  /** Per series: average, p50, p95, p99 JCT and average queueing, interpolated alike. */
  readonly metrics: Record<string, RunMetricsAtPaid | null>;
}

/** A paid usage to read off at, absolute or as a multiple of the minimum feasible budget. */
export interface PaidPoint {
  readonly paid: number;
  readonly minimumMultiple?: number;
}

/** Every policy at the same spend: the comparison the charts show, read off at given paid usages. */
export function atPaid(rows: readonly CompareRow[], points: ReadonlyArray<number | PaidPoint>): AtPaidRow[] {
  const complete = rows.filter((r) => r.completed === r.jobs);
  const series = [...new Set(rows.map(seriesOf))];
  return points.map((point) => {
    const { paid, minimumMultiple } =
      typeof point === 'number' ? { paid: point, minimumMultiple: undefined } : point;
    const runsOf = (name: string) => complete.filter((r) => seriesOf(r) === name);
    return {
      paidGpuHoursPerHour: paid,
      ...(minimumMultiple === undefined ? {} : { minimumMultiple }),
      avgJctSeconds: Object.fromEntries(series.map((name) => [name, jctAtPaid(runsOf(name), paid)])),
      metrics: Object.fromEntries(series.map((name) => [name, metricsAtPaid(runsOf(name), paid)])),
    };
  });
}

/** The same as a text table: one row per paid usage, one column per policy, seconds. */
export function atPaidTable(
  table: readonly AtPaidRow[],
  metric: keyof RunMetricsAtPaid = 'avgJctSeconds',
  title = 'average JCT (s) at a matched paid usage (GPU-hours/hour)',
): string {
  if (table.length === 0) return '';
  const policies = Object.keys((table[0] as AtPaidRow).avgJctSeconds);
  const header = ['paid', ...policies];
  const lines = table.map((row) => [
    row.minimumMultiple === undefined
      ? String(row.paidGpuHoursPerHour)
      : `${row.paidGpuHoursPerHour.toFixed(1)} (${row.minimumMultiple}x)`,
    ...policies.map((p) => {
      const v = metric === 'avgJctSeconds' ? row.avgJctSeconds[p] : row.metrics?.[p]?.[metric];
      return v === null || v === undefined ? '-' : v.toFixed(0);
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
  return `${[title, format(header), ...lines.map(format)].join('\n')}\n`;
}

/**
 * Why a table's cell is "-": the paid range of each series that has one. A series is read off only
 * between two of its complete runs, never extrapolated, and nothing else said so.
 */
export function atPaidGaps(rows: readonly CompareRow[], table: readonly AtPaidRow[]): string {
  const series = Object.keys(table[0]?.avgJctSeconds ?? {});
  const gaps = series.filter((name) => table.some((row) => row.avgJctSeconds[name] === null));
  if (gaps.length === 0) return '';
  const range = (name: string) => {
    const paid = rows
      .filter((r) => seriesOf(r) === name && r.completed === r.jobs)
      .map((r) => r.paidGpuHoursPerHour);
    if (paid.length === 0) return `${name}: no run completed every job`;
    const [lo, hi] = [Math.min(...paid), Math.max(...paid)].map((p) => p.toFixed(1));
    return paid.length === 1 ? `${name}: one run, paid ${lo}` : `${name}: ${lo} to ${hi}`;
  };
  return (
    '-: outside what the series paid (read off between two of its complete runs, never extrapolated; ' +
    `add values of its knob to reach it): ${gaps.map(range).join(', ')}\n`
  );
}

export function compareCsv(rows: readonly CompareRow[]): string {
  if (rows.length === 0) return '';
  // Every field any row has: rows merged from older runs may lack a newer one (price).
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))] as Array<keyof CompareRow>;
  const text = (v: unknown) =>
    v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v))
      ? ''
      : typeof v === 'object'
        ? objectText(v as Record<string, unknown>)
        : String(v);
  // RFC 4180: labels and flags hold commas (--sensitivity, --cluster g4dn:8,p3:4).
  const cell = (v: unknown) => {
    const s = text(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const line = (cells: readonly unknown[]) => cells.map(cell).join(',');
  return `${[line(columns), ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n')}\n`;
}

/**
 * A flat object as `key:value;...` (utilizationByType `t4:0.61;v100:0.4`), one that nests as JSON
 * (engine flags with a cluster's types printed `cluster:[object Object]`).
 */
function objectText(v: Record<string, unknown>): string {
  const entries = Object.entries(v);
  return entries.some(([, x]) => typeof x === 'object' && x !== null)
    ? JSON.stringify(v)
    : entries.map(([k, x]) => `${k}:${String(x)}`).join(';');
}
