/**
 * The offline Pareto-frontier calculator: what each budget buys for a workload, with the exact
 * calculator and/or the paper's Algorithm 1.
 *   npm run -s frontier -- --trace FILE [--profiles FILE] [--apps a,b] [--budgets LO:HI:STEP | b1,b2,...]
 *     [--solver exact|paper|exact,paper] [--format json|csv|svg] [--out FILE]
 */
import { relative } from 'node:path';
import { Option } from 'commander';
import { frontierChart } from '../src/charts/frontier-chart.ts';
import { computeFrontier } from '../src/core/calc/frontier.ts';
import { LagrangianSolver } from '../src/core/calc/lagrangian.ts';
import type { SolverName } from '../src/core/calc/solution.ts';
import { sweepBudgets } from '../src/core/calc/sweep.ts';
import { buildInstance } from '../src/core/instance.ts';
import { arrivalRatesPerHour } from '../src/core/trace.ts';
import { parseBudgets, spaced } from './lib/budgets.ts';
import { type FrontierReport, frontierCsv } from './lib/frontier-report.ts';
import {
  checkOut,
  emit,
  loadProfileFile,
  loadTrace,
  parseList,
  runMain,
  UsageError,
  scriptProgram,
} from './lib/inputs.ts';
import { DEFAULT_PROFILES } from './lib/paths.ts';
import { progressBar } from './lib/progress.ts';
import { seedOption } from './lib/sim-args.ts';

const program = scriptProgram('frontier')
  .description('Average JCT against budget (GPU-hours per hour) for a workload trace')
  .requiredOption('--trace <file>', 'workload CSV (name,time,application,num_replicas,batch_size)')
  .option('--profiles <file>', 'job-class profile file', DEFAULT_PROFILES)
  .option('--apps <list>', 'only these classes, comma-separated')
  .option(
    '--budgets <spec>',
    'LO:HI:STEP or b1,b2,... (default: 50 points from the minimum feasible to 4x it)',
  )
  .option('--solver <list>', 'exact, paper, or exact,paper', 'exact')
  .addOption(new Option('--format <format>', 'output format').choices(['json', 'csv', 'svg']).default('json'))
  .option('--out <file>', 'write here instead of stdout')
  .option('--seed <n>', "random seed of the paper's glue configurations", '1')
  .option('--quiet', 'no progress on stderr');

await runMain(async () => {
  program.parse();
  const opts = program.opts<{
    trace: string;
    profiles: string;
    apps?: string;
    budgets?: string;
    solver: string;
    format: 'json' | 'csv' | 'svg';
    out?: string;
    seed: string;
    quiet?: boolean;
  }>();
  checkOut(opts.out);
  const solvers = parseList(opts.solver, '--solver') as SolverName[];
  const bad = solvers.filter((s) => s !== 'exact' && s !== 'paper');
  if (bad.length) throw new UsageError(`--solver: unknown ${bad.join(', ')}; allowed: exact, paper`);
  const seed = seedOption(opts.seed);

  const profile = loadProfileFile(opts.profiles);
  const apps = opts.apps ? parseList(opts.apps, '--apps') : undefined;
  const rates = arrivalRatesPerHour(loadTrace(opts.trace), apps);
  const instance = buildInstance(profile, rates);
  const solver = new LagrangianSolver(instance);
  const frontier = computeFrontier(instance, solver);
  const minFeasibleBudget = (frontier.vertices[0] as (typeof frontier.vertices)[number]).value
    .gpuHoursPerHour;
  const spec = parseBudgets(opts.budgets);
  const budgets = spec.kind === 'list' ? spec.budgets : spaced(minFeasibleBudget, 4 * minFeasibleBudget, 50);

  const reports: FrontierReport[] = solvers.map((name) => {
    const bar = progressBar(`${name} calculator`, budgets.length, !opts.quiet && name === 'paper');
    const points = sweepBudgets(instance, name, budgets, { paper: { seed }, onPoint: bar.tick });
    bar.stop();
    return {
      solver: name,
      profiles: relative(process.cwd(), opts.profiles) || opts.profiles,
      arrivalRatesPerHour: rates,
      minFeasibleBudget,
      ...(name === 'exact'
        ? {
            hull: frontier.vertices.map((v) => ({
              gpuHoursPerHour: v.value.gpuHoursPerHour,
              avgJctSeconds: v.value.avgJctSeconds,
            })),
          }
        : {}),
      points,
    };
  });

  if (opts.format === 'json') {
    emit(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`, opts.out);
  } else if (opts.format === 'csv') {
    emit(frontierCsv(reports), opts.out);
  } else {
    const title = `Average JCT vs budget: ${Object.keys(rates).join(', ')}`;
    emit(await frontierChart(reports, minFeasibleBudget, title), opts.out);
  }
});
