import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, EXIT, usageError } from '../errors.ts';
import { contextOf, output } from '../context.ts';
import { duration, fixed, keyValues, significant, table } from '../format.ts';
import { notAChartToReplace } from '../svg-file.ts';
import { writeProblem } from '../write-problem.ts';

interface FrontierView {
  ratesPerHour: Record<string, number>;
  minFeasibleBudget: number | null;
  minFeasiblePaidBudget?: number | null;
  budget?: number | null;
  plan?: { gpuHoursPerHour: number; avgJctSeconds: number } | null;
  vertices: Array<{ gpuHoursPerHour: number; avgJctSeconds: number }>;
  rateWindow?: { observedHours: number; windowHours: number };
  lastSubmittedAt?: string | null;
}

export function addFrontierCommand(program: Command): void {
  program
    .command('frontier')
    .description('what each budget buys: the budget vs predicted average JCT frontier, current estimates')
    .option('--svg <file>', 'write the frontier as an SVG chart to this file instead')
    .action(async (options: { svg?: string }, command: Command) => {
      const context = contextOf(command);
      if (options.svg !== undefined) {
        if (options.svg.trim() === '') throw usageError('--svg needs a file name');
        const kept = notAChartToReplace(options.svg);
        if (kept) throw usageError(`will not write ${options.svg}: ${kept}`);
        const svg = await context.client.text('GET', '/v1/frontier?format=svg');
        if (!svg.trimStart().startsWith('<svg')) {
          throw new CliError('the service did not answer with an SVG chart', EXIT.failed);
        }
        try {
          writeFileSync(options.svg, svg);
        } catch (error) {
          throw usageError(`cannot write ${options.svg}: ${writeProblem(error as NodeJS.ErrnoException)}`);
        }
        context.print(`frontier chart written to ${options.svg}\n`);
        return;
      }
      const { data, text } = await context.client.json<FrontierView>(
        'GET',
        '/v1/frontier',
        undefined,
        undefined,
        ['vertices'],
      );
      output(context, text, () => renderFrontier(data));
    });
}

/**
 * Where the predicted numbers come from, and how far what runs was from them (found in a team lead's
 * trial: the demo on workload-1 took 1.6x the frontier's JCT at 40, 2.3x at 25, and nothing said so).
 */
export const PREDICTED_NOTE =
  'Predicted by the model: every job on its planned widths from arrival, no queueing, no node boot.\n' +
  'A replay of workload-1 took 1.0x-2.3x these JCTs (docs/budget.md, "What the frontier predicts").';

/**
 * While the rate window is not full the rates, and so the whole frontier, rest on few arrivals (found
 * in a team lead's trial: two jobs in the first minute read as a frontier, like a day's).
 */
function youngRates(window: FrontierView['rateWindow']): Array<[string, string]> {
  if (!window || window.observedHours >= window.windowHours) return [];
  const observed = `${fixed(window.observedHours, 1)} of the rate window's ${window.windowHours} h observed`;
  return [['rates', `${observed}: the frontier moves as arrivals come (boa history import reads past ones)`]];
}

/**
 * The exact calculator lists every hull vertex, and many differ only in the tenth digit; rows that
 * would print the same are shown once.
 */
export function renderFrontier(f: FrontierView): string {
  const rows: string[][] = [];
  for (const v of f.vertices) {
    const row = [significant(v.gpuHoursPerHour), v.avgJctSeconds.toFixed(0), duration(v.avgJctSeconds)];
    const last = rows[rows.length - 1];
    if (!last || last[0] !== row[0] || last[1] !== row[1]) rows.push(row);
  }
  const rates = Object.entries(f.ratesPerHour)
    .map(([name, rate]) => `${name} ${significant(rate)}`)
    .join(', ');
  // No arrivals: every class is planned at a negligible rate, so the table's budgets are ten-thousandths
  // of a GPU, a frontier of no load (found in a team lead's trial: 0.0001665 GPU-hours/hour read as one).
  const none = !Object.values(f.ratesPerHour).some((rate) => rate > 0);
  // With jobs before, an empty rate window is a quiet spell, not a new service (found in review).
  const quiet = none && f.lastSubmittedAt != null;
  const window = f.rateWindow ? `${f.rateWindow.windowHours} h` : 'rate window';
  // The budget is paid; the frontier's minimum is allocated to jobs, so compare the paid minimum.
  const minimum = f.minFeasiblePaidBudget ?? f.minFeasibleBudget;
  const below = f.budget != null && minimum != null && f.budget < minimum;
  // Shown as a budget (paid), the figure `your budget` is compared with, the allocated one beside it:
  // "minimum 30, your budget 33: below the minimum" read as a contradiction.
  const minimumText =
    minimum != null && significant(minimum) !== significant(f.minFeasibleBudget)
      ? `${significant(minimum)} GPU-hours/hour paid (${significant(f.minFeasibleBudget)} allocated to jobs)`
      : `${significant(f.minFeasibleBudget)} GPU-hours/hour`;
  const summary = keyValues([
    ['minimum feasible', none ? '-' : minimumText],
    ['arrivals (jobs/h)', quiet ? `none in the last ${window}` : none ? 'none yet' : rates],
    ...youngRates(f.rateWindow),
    ...(f.budget == null
      ? []
      : [
          [
            'your budget',
            `${f.budget} GPU-hours/hour` +
              (below && !none
                ? ': below the minimum, jobs wait for it when even the cheapest widths do not fit, and the JCTs leave any wait out'
                : ''),
          ] as [string, string],
        ]),
    ...(f.plan && !none
      ? [
          [
            'current plan',
            `${significant(f.plan.gpuHoursPerHour)} GPU-hours/hour allocated, average JCT ${duration(f.plan.avgJctSeconds)}`,
          ] as [string, string],
        ]
      : []),
    ...(none
      ? []
      : [
          ['vertices', `${f.vertices.length} (${rows.length} distinct to the digits shown)`] as [
            string,
            string,
          ],
        ]),
  ]);
  if (none) {
    // Lower case, as the CLI's other empty answers ("no jobs", "no history imported").
    const why = quiet
      ? `no arrivals in the rate window (the last ${window}; the latest submission ${f.lastSubmittedAt})`
      : 'no arrivals yet (no jobs, imported history or prior rates)';
    return (
      `${summary}\n${why}: a frontier needs the load; import a job log or trace (boa history import) or ` +
      'give prior rates (boa classes put --prior-rate)\n'
    );
  }
  // GPU-hours allocated to jobs, as the plan's: the budget pays for more (whole nodes, boot, release).
  const head = ['allocated GPU-h/h', 'avg JCT s', 'avg JCT'];
  return (
    `${summary}\nBetween two vertices, boa mixes their plans: JCT falls linearly with budget.\n` +
    `${PREDICTED_NOTE}\n${table(head, rows)}`
  );
}
