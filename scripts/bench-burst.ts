/**
 * Burst benchmark: 1000 jobs registered at once at a budget of 40 on the embedded default (local node
 * pool, 1 s ticks, 1 s boot), 120 ticks. Prints one JSON object: whether the budget was accepted, the
 * most GPUs paid against what the budget window allowed, how the queue drained, and the budget the
 * load would need as `boa status` shows it.
 *   npm run -s bench:burst -- [--jobs N] [--budget B] [--ticks N] [--run-ticks N]
 */
import { runBurst } from './lib/burst.ts';
import { runMain, UsageError, scriptProgram } from './lib/inputs.ts';

const program = scriptProgram('bench:burst')
  .option('--jobs <n>', 'jobs registered at once', '1000')
  .option('--budget <b>', 'budget, GPU-hours per hour', '40')
  .option('--ticks <n>', 'ticks of 1 s', '120')
  .option('--run-ticks <n>', 'ticks each job runs before it finishes', '20')
  .option('--classes <list>', 'job classes, round robin', 'cifar10,bert,deepspeech2');

await runMain(async () => {
  const opts = program.parse().opts<Record<string, string>>();
  const [jobs, budget, ticks, runTicks] = ['jobs', 'budget', 'ticks', 'runTicks'].map((k) => Number(opts[k]));
  for (const [name, value] of Object.entries({ jobs, ticks, runTicks })) {
    if (!Number.isInteger(value) || (value as number) < 1)
      throw new UsageError(`--${name} must be a positive integer`);
  }
  if (!((budget as number) > 0)) throw new UsageError('--budget must be a positive number');
  const result = await runBurst({
    jobs: jobs as number,
    budget: budget as number,
    ticks: ticks as number,
    runTicks: runTicks as number,
    classes: String(opts.classes).split(','),
  });
  const paid = result.ticks.map((t) => t.paidGpus);
  // A node held is kept within half a node (2 GPUs) of the ceiling: hysteresis against flapping.
  const overCeiling = result.ticks.filter((t) => t.paidGpus > t.ceilingGpus + 2 + 1e-9).length;
  const first = result.ticks[0];
  const last = result.ticks[result.ticks.length - 1];
  process.stdout.write(
    `${JSON.stringify({
      bench: 'burst',
      jobs,
      budget,
      ticks,
      budgetAccepted: result.budgetSetStatus === 200,
      maxPaidGpus: Math.max(...paid),
      maxPaidOverBudgetPct: Number(((Math.max(...paid) / (budget as number) - 1) * 100).toFixed(2)),
      ticksPaidAboveCeiling: overCeiling,
      paidGpuHoursPerHour: Number(result.paidGpuHoursPerHour.toFixed(3)),
      queuedForBudgetFirst: first?.queuedForBudget,
      queuedForBudgetLast: last?.queuedForBudget,
      jobsThatRan: result.jobsThatRan,
      jobsDone: last?.done,
      loadNeedsGpuHoursPerHour: result.status.budget?.loadNeedsGpuHoursPerHour,
      control: result.control,
      ms: Math.round(result.ms),
    })}\n`,
  );
});
