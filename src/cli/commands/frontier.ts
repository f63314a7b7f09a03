import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, EXIT, usageError } from '../errors.ts';
import { contextOf, output } from '../context.ts';
import { duration, keyValues, significant, table } from '../format.ts';
import { writeProblem } from '../write-problem.ts';

interface FrontierView {
  ratesPerHour: Record<string, number>;
  minFeasibleBudget: number | null;
  budget?: number | null;
  plan?: { gpuHoursPerHour: number; avgJctSeconds: number } | null;
  vertices: Array<{ gpuHoursPerHour: number; avgJctSeconds: number }>;
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
      const { data, text } = await context.client.json<FrontierView>('GET', '/v1/frontier');
      output(context, text, () => renderFrontier(data));
    });
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
  const summary = keyValues([
    ['minimum feasible', `${significant(f.minFeasibleBudget)} GPU-hours/hour`],
    ['arrivals (jobs/h)', rates],
    ...(f.budget == null ? [] : [['your budget', `${f.budget} GPU-hours/hour`] as [string, string]]),
    ...(f.plan
      ? [
          [
            'current plan',
            `${significant(f.plan.gpuHoursPerHour)} GPU-hours/hour, average JCT ${duration(f.plan.avgJctSeconds)}`,
          ] as [string, string],
        ]
      : []),
    ['vertices', `${f.vertices.length} (${rows.length} distinct to the digits shown)`],
  ]);
  const head = ['budget GPU-h/h', 'avg JCT s', 'avg JCT'];
  return `${summary}\nBetween two vertices, boa mixes their plans: JCT falls linearly with budget.\n${table(head, rows)}`;
}
