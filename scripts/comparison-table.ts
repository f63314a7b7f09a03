/**
 * The comparison tables of docs/comparison.md from compare's outputs: for each folder, every series'
 * average and p95 JCT at the matched paid points (at-paid.json), the best policy other than boa, and
 * boa's paid spend against its budget (results.json); and, where the folders have a boa-price series,
 * the two pairs at equal information: each policy at a constant knob (boa-price, pollux-autoscale),
 * and each holding a budget (boa, pollux-budget).
 *   npm run -s comparison-table -- DIR...
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { atPaidRows, compareRows } from './lib/compare-files.ts';
import { seriesOf } from './lib/compare-report.ts';
import { runMain, UsageError, scriptProgram } from './lib/inputs.ts';

const BOA = 'boa';
const ORACLE = 'boa (oracle rates)';
const PRICE = 'boa-price';
/** The policies whose series are boa's own (any variant, rates or ceiling): never "the best other". */
const OWN_POLICIES = new Set([BOA, PRICE]);
const s = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toFixed(0));
/** The paid point, and its multiple of the minimum when compare was given one (1.6x), not absolute (40). */
const paidCell = (row: { paidGpuHoursPerHour: number; minimumMultiple?: number | null }) =>
  `${row.paidGpuHoursPerHour.toFixed(1)}${row.minimumMultiple ? ` (${row.minimumMultiple}x)` : ''}`;

const program = scriptProgram('comparison-table')
  .description("The tables of docs/comparison.md from compare's output folders")
  .argument('<dirs...>', 'compare output folders, each written with --at-paid (at-paid.json, results.json)');

/** A compare output file, or a usage error saying which is missing and what writes it. */
function readOutput(dir: string, file: 'at-paid.json' | 'results.json'): unknown {
  if (!existsSync(dir)) throw new UsageError(`${dir}: no such folder; give folders compare wrote`);
  const path = join(dir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code !== 'ENOENT'
        ? code
        : file === 'at-paid.json'
          ? 'no such file (compare writes it with --at-paid)'
          : 'no such file';
    throw new UsageError(`cannot read ${path}: ${why}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`);
  }
}

await runMain(() => {
  const dirs = program.parse().args;
  const lines = [
    '| trace | paid (x min) | boa avg / p95 | boa oracle avg / p95 | best other (avg) | its avg / p95 | pollux-autoscale avg / p95 | pollux-budget avg / p95 | boa avg vs best other |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const spend: string[] = [];
  const pairs = [
    '| trace | paid (x min) | boa-price avg / p95 | pollux-autoscale avg / p95 | boa-price vs pollux-autoscale | boa avg / p95 | pollux-budget avg / p95 | boa vs pollux-budget |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const dir of dirs) {
    const table = atPaidRows(readOutput(dir, 'at-paid.json'), join(dir, 'at-paid.json'));
    const rows = compareRows(readOutput(dir, 'results.json'), join(dir, 'results.json'));
    // By the policy each series ran, not its name: boa@firstday2, boa-price@ceiling40 or --prior-from
    // are boa too, and one of them read as "the best other" compared boa with itself.
    const boas = new Set([
      BOA,
      ORACLE,
      PRICE,
      ...rows.filter((r) => OWN_POLICIES.has(r.policy)).map((r) => seriesOf(r)),
    ]);
    for (const row of table) {
      const m = row.metrics;
      const others = Object.entries(m).filter(([name, v]) => !boas.has(name) && v !== null);
      const best = others.sort(([, a], [, b]) => (a?.avgJctSeconds ?? 0) - (b?.avgJctSeconds ?? 0))[0];
      const pair = (name: string) => `${s(m[name]?.avgJctSeconds)} / ${s(m[name]?.p95JctSeconds)}`;
      const boa = m[BOA]?.avgJctSeconds;
      const ratio = boa && best ? `${(boa / (best[1]?.avgJctSeconds as number)).toFixed(2)}x` : '-';
      const vs = (a: string, b: string) => {
        const x = m[a]?.avgJctSeconds;
        const y = m[b]?.avgJctSeconds;
        return x && y ? `${(x / y).toFixed(2)}x` : '-';
      };
      if (m[PRICE] !== undefined)
        pairs.push(
          `| ${basename(dir)} | ${paidCell(row)} | ${pair(PRICE)} | ${pair('pollux-autoscale')} | ${vs(PRICE, 'pollux-autoscale')} | ${pair(BOA)} | ${pair('pollux-budget')} | ${vs(BOA, 'pollux-budget')} |`,
        );
      lines.push(
        `| ${basename(dir)} | ${paidCell(row)} | ${pair(BOA)} | ${pair(ORACLE)} | ${best ? best[0] : '-'} | ${best ? pair(best[0]) : '-'} | ${pair('pollux-autoscale')} | ${pair('pollux-budget')} | ${ratio} |`,
      );
    }
    // Any point given as a multiple tells the minimum: --at-paid 40,1.6x has it on its second point.
    const multiple = table.find((r) => r.minimumMultiple);
    const minimum = multiple?.minimumMultiple
      ? multiple.paidGpuHoursPerHour / multiple.minimumMultiple
      : undefined;
    // The series named boa, as in the tables above: a variant (boa@cap2, --prior-from, --history,
    // --solver paper) is a policy 'boa' with online rates too, and its runs were listed here beside boa's.
    const boaRuns = rows.filter((r) => seriesOf(r) === BOA && r.rates === 'online' && r.budget !== null);
    const cells = boaRuns.map((r) => {
      const x = minimum ? ` (${((r.budget as number) / minimum).toFixed(1)}x)` : '';
      // Signed: "19%" read as paid 19% of the budget, not 19% over it (found in a newcomer trial).
      const over = Math.round(100 * (r.paidGpuHoursPerHour / (r.budget as number) - 1));
      return `${(r.budget as number).toFixed(0)}${x}: ${over > 0 ? '+' : ''}${over}%`;
    });
    spend.push(`| ${basename(dir)} | ${cells.join(', ')} |`);
  }
  process.stdout.write(
    `${lines.join('\n')}\n\nboa (online) paid against its budget:\n\n| trace | budget: paid over/under |\n|---|---|\n${spend.join('\n')}\n`,
  );
  if (pairs.length > 2)
    process.stdout.write(
      `\nAt equal information, a constant knob (picked in hindsight at matched paid) and a budget held:\n\n${pairs.join('\n')}\n`,
    );
});
