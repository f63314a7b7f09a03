/**
 * compare's knobs and read-off points as multiples of the minimum feasible budget (`1.2x`), and its
 * `--sensitivity` mode: pollux-autoscale's setting choices side by side against boa.
 */
import type { PolicyOptions } from '../../src/sim/policy.ts';
import type { AtPaidRow, PaidPoint } from './compare-report.ts';
import { UsageError } from './inputs.ts';
import { decimalOrNaN } from './sim-args.ts';

/**
 * Values given absolutely, or all as multiples of the minimum feasible budget (each part ending in x,
 * a range's too: `1.1x:3x:0.1x`). `minimum` is computed only when needed.
 */
export function relativeList(
  text: string,
  minimum: () => number,
  parse: (text: string) => number[],
): { values: number[]; points: PaidPoint[] } {
  const parts = text.split(/[,:]/).map((p) => p.trim());
  const relative = parts.filter((p) => p.endsWith('x')).length;
  if (relative === 0) {
    const values = parse(text);
    return { values, points: values.map((paid) => ({ paid })) };
  }
  if (relative !== parts.length) {
    throw new UsageError(`"${text}": give every value as a multiple (1.2x) or none of them`);
  }
  // Checked here: once the x is stripped, the parser's error would quote "0" for "0x", in GPU-hours.
  const bad = parts.find((p) => p.slice(0, -1).trim() === '' || !(decimalOrNaN(p.slice(0, -1)) > 0));
  if (bad !== undefined) {
    throw new UsageError(
      `"${bad}" in "${text}": a multiple of the minimum feasible budget is a positive number then x (1.2x)`,
    );
  }
  const stripped = text.replace(/x/g, '');
  let multiples: number[];
  try {
    multiples = parse(stripped);
  } catch (error) {
    // The parser quotes what it was given: put the x back, or "1x:3x" reads as "1:3" GPU-hours.
    if (!(error instanceof UsageError)) throw error;
    throw new UsageError(error.message.split(`"${stripped}"`).join(`"${text}"`));
  }
  const min = minimum();
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  // Budgets round up: `1x` rounded down fell below the minimum and boa (oracle) refused it.
  const roundUp = (v: number) => Math.ceil(v * 1e6) / 1e6;
  return {
    values: multiples.map((m) => roundUp(m * min)),
    points: multiples.map((m) => ({ paid: round(m * min), minimumMultiple: m })),
  };
}

interface SensitivityEntry {
  readonly policy: string;
  readonly options?: PolicyOptions;
  readonly label: string;
}

const pollux = (
  cap: boolean,
  window: number,
  bootFreeze: boolean,
  interferenceAvoidance: boolean,
): SensitivityEntry => ({
  policy: 'pollux-autoscale',
  options: { explorationCap: cap, utilityWindowTicks: window, bootFreeze, interferenceAvoidance },
  label:
    `pollux-autoscale: cap ${cap ? 'on' : 'off'}, window ${window}${bootFreeze ? ', boot freeze' : ''}` +
    (interferenceAvoidance ? '' : ', no interference avoidance'),
});

/**
 * The table: the old default first (cap on, 15-tick window, freeze while nodes boot, and the
 * interference avoidance every row had until 2026-12-02), one choice changed at a time, today's last.
 */
export const SENSITIVITY_ENTRIES: readonly SensitivityEntry[] = [
  { policy: 'boa', label: 'boa' },
  { policy: 'boa', options: { rates: 'oracle' }, label: 'boa (oracle rates)' },
  pollux(true, 15, true, true),
  pollux(true, 1, true, true),
  pollux(false, 15, true, true),
  pollux(false, 1, true, true),
  pollux(false, 1, false, true),
  pollux(false, 1, false, false),
];

/** Per paid point, one line per Pollux setting: its JCT and how many times boa's (online, oracle) it is. */
export function sensitivityTable(table: readonly AtPaidRow[]): string {
  const lines: string[] = [];
  for (const row of table) {
    const at = row.minimumMultiple === undefined ? '' : ` (${row.minimumMultiple}x the minimum)`;
    lines.push(`average JCT at paid ${row.paidGpuHoursPerHour.toFixed(1)} GPU-hours/hour${at}`);
    const boa = row.avgJctSeconds.boa ?? null;
    const oracle = row.avgJctSeconds['boa (oracle rates)'] ?? null;
    const cell = (v: number | null) => (v === null ? '-' : `${v.toFixed(0)} s`);
    const ratio = (p: number | null, b: number | null) =>
      p === null || b === null ? '-' : `${(p / b).toFixed(2)}x`;
    lines.push(
      `| Pollux setting | Pollux JCT | vs boa, oracle rates (${cell(oracle)}) | vs boa, online rates (${cell(boa)}) |`,
    );
    lines.push('|---|---|---|---|');
    for (const entry of SENSITIVITY_ENTRIES.filter((e) => e.policy === 'pollux-autoscale')) {
      const p = row.avgJctSeconds[entry.label] ?? null;
      const setting = entry.label.replace('pollux-autoscale: ', '');
      lines.push(`| ${setting} | ${cell(p)} | ${ratio(p, oracle)} | ${ratio(p, boa)} |`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
