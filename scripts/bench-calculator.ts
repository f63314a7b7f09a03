/**
 * Calculator benchmark: one solve at one budget on the committed profiles, newTrace mix at 20 jobs/hour.
 * Prints one JSON object. Solvers alternate run by run so machine drift hits both alike.
 *   npm run -s bench:calculator -- [--runs N] [--budget-factor F] [--profiles FILE]
 */
import { solveExact } from '../src/core/calc/exact.ts';
import { computeFrontier } from '../src/core/calc/frontier.ts';
import { solvePaper } from '../src/core/calc/paper.ts';
import { sweepBudgets } from '../src/core/calc/sweep.ts';
import { buildInstance } from '../src/core/instance.ts';
import { spaced } from './lib/budgets.ts';
import { loadProfileFile, runMain, UsageError, scriptProgram } from './lib/inputs.ts';
import { NEW_TRACE_MIX, ratesFromMix } from './lib/mixes.ts';
import { DEFAULT_PROFILES } from './lib/paths.ts';

const program = scriptProgram('bench:calculator')
  .option('--runs <n>', 'timed runs per solver', '31')
  .option('--budget-factor <f>', 'budget as a multiple of the minimum feasible budget', '1.5')
  .option('--profiles <file>', 'job-class profile file', DEFAULT_PROFILES);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function timed<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const result = fn();
  return [result, performance.now() - start];
}

await runMain(() => {
  const opts = program.parse().opts<{ runs: string; budgetFactor: string; profiles: string }>();
  const runs = Number(opts.runs);
  const factor = Number(opts.budgetFactor);
  if (!Number.isInteger(runs) || runs < 1)
    throw new UsageError(`--runs must be a positive integer, got ${opts.runs}`);
  if (!(factor >= 1)) throw new UsageError(`--budget-factor must be at least 1, got ${opts.budgetFactor}`);
  const rates = ratesFromMix(NEW_TRACE_MIX, 20);
  const instance = buildInstance(loadProfileFile(opts.profiles), rates);
  const minFeasibleBudget = computeFrontier(instance).vertices[0]?.value.gpuHoursPerHour as number;
  const budget = factor * minFeasibleBudget;

  // Warm-up so both are measured with optimised code.
  for (let i = 0; i < 3; i++) {
    solveExact(instance, budget);
    solvePaper(instance, budget);
  }
  const exactMs: number[] = [];
  const paperMs: number[] = [];
  let exact = solveExact(instance, budget);
  let paper = solvePaper(instance, budget);
  for (let i = 0; i < runs; i++) {
    let ms: number;
    [exact, ms] = timed(() => solveExact(instance, budget));
    exactMs.push(ms);
    [paper, ms] = timed(() => solvePaper(instance, budget));
    paperMs.push(ms);
  }
  const frontierBudgets = spaced(minFeasibleBudget, 4 * minFeasibleBudget, 50);
  const frontierMs = median(
    Array.from({ length: 5 }, () => timed(() => sweepBudgets(instance, 'exact', frontierBudgets))[1]),
  );
  const hullMs = median(Array.from({ length: 5 }, () => timed(() => computeFrontier(instance))[1]));
  const exactMedianMs = median(exactMs);
  const paperMedianMs = median(paperMs);
  const result = {
    exactMedianMs: +exactMedianMs.toFixed(4),
    paperMedianMs: +paperMedianMs.toFixed(4),
    speedup: +(paperMedianMs / exactMedianMs).toFixed(1),
    exactP95Ms: +(exactMs.sort((a, b) => a - b)[Math.floor(0.95 * (runs - 1))] as number).toFixed(4),
    frontier50PointsMs: +frontierMs.toFixed(3),
    fullHullMs: +hullMs.toFixed(3),
    runs,
    budget: +budget.toFixed(4),
    minFeasibleBudget: +minFeasibleBudget.toFixed(4),
    exactAvgJctSeconds: +exact.value.avgJctSeconds.toFixed(1),
    paperAvgJctSeconds: paper ? +paper.value.avgJctSeconds.toFixed(1) : null,
    ratesPerHour: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, +v.toFixed(4)])),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
