/**
 * Policies side by side on one trace: each policy at each value of its knob, in parallel worker threads.
 *   npm run -s compare -- --trace FILE [--apps a,b] --policies a,b --budgets LO:HI:STEP [--targets t1,...]
 *     [--cluster g4dn:8,p3:4]
 *     --out DIR [--seed N] [--solver exact|paper] [--rates online|prior|oracle] [--workers N] [engine flags]
 *     [--at-paid p1,...] [--sensitivity]
 * Writes DIR/results.json, DIR/results.csv, DIR/avg-jct.svg and DIR/p95-jct.svg (and DIR/at-paid.json).
 * Budgets and paid points may be given as multiples of the minimum feasible budget at the trace's
 * rates (`1.2x`): a place to read the comparison at, never an input to any policy.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, extname, join } from 'node:path';
import { arrivalRatesPerHour } from '../src/core/trace.ts';
import { BoaPlanner } from '../src/sim/policies/boa/planner.ts';
import { findPolicy, POLICIES } from '../src/sim/policies/index.ts';
import { VARIANTS_HELP } from './lib/boa-variants.ts';
import { isPolicyOptionsError } from '../src/sim/policy.ts';
import type { SimResult } from '../src/sim/run.ts';
import { parseBudgets } from './lib/budgets.ts';
import {
  atPaid,
  atPaidGaps,
  atPaidTable,
  type CompareEntry,
  type CompareRow,
  type CompareTask,
  compareTasks,
  parsePolicyEntry,
  seriesOf,
} from './lib/compare-report.ts';
import { clusterMetricsTable, oneRunPerFixedSeries } from './lib/cluster-report.ts';
import { prepareOutDir, writeRunOutputs } from './lib/compare-output.ts';
import { relativeList, SENSITIVITY_ENTRIES, sensitivityTable } from './lib/compare-relative.ts';
import type { CompareSetup } from './lib/compare-worker.ts';
import { parseList, runMain, UsageError, scriptProgram } from './lib/inputs.ts';
import { progressBar } from './lib/progress.ts';
import { asUsage, decimalOrNaN, numberOption, seedOption } from './lib/sim-args.ts';
import {
  type EngineFlags,
  engineConfigFrom,
  loadSimInputs,
  optionsForPolicy,
  policyOptionsFrom,
  withSimulationOptions,
} from './lib/sim-setup.ts';
import { historyFrom, priorFrom, withHistory, withPrior } from './lib/other-days.ts';
import { refuseBelowServiceFloor } from './lib/service-floor.ts';
import { runPool } from './lib/worker-pool.ts';

const DEFAULT_TARGETS = '0.5,0.6,0.7,0.8,0.9';
// From narrow (a GPU-second must save 3 s) to wide; the matrix sweeps finer (docs/comparison.md).
const DEFAULT_PRICES = '3,1,0.3,0.1,0.03,0.01';
/** Errors that make one point meaningless (say a budget below boa's minimum) but not the comparison. */
const SKIPPABLE = ['BudgetTooLowError', 'EngineConfigError'];

const program = withSimulationOptions(
  scriptProgram('compare')
    .description('Average and P95 JCT against paid GPU-hours per hour for several policies on one trace')
    .requiredOption('--trace <file>', 'workload CSV (name,time,application,num_replicas,batch_size)')
    .option('--apps <list>', 'only these applications, comma-separated')
    .option(
      '--policies <list>',
      `comma-separated policy names (${POLICIES.map((p) => p.name).join(', ')}); ${VARIANTS_HELP}`,
    )
    .option(
      '--budgets <spec>',
      'LO:HI:STEP or b1,b2,... for policies whose knob is a budget (1.2x: times the minimum feasible); with --cluster, fixed-cluster policies run once on it',
    )
    .option('--targets <list>', 'values for policies whose knob is a target efficiency', DEFAULT_TARGETS)
    .option(
      '--prices <list>',
      'values for policies whose knob is a price (boa-price: seconds of JCT one more GPU-second must save)',
      DEFAULT_PRICES,
    )
    .requiredOption('--out <dir>', 'folder for results.json, results.csv and the charts')
    .option('--seed <n>', 'random seed', '1')
    .option('--solver <name>', 'boa: exact or paper')
    .option(
      '--rates <source>',
      "boa: online (default, as the service estimates them), prior (online, starting from the trace's rates, as the demo's --prior trace) or oracle (the trace's rates)",
    )
    .option(
      '--prior-from <files>',
      "boa: its online estimator starts from these other traces' average rates per class, as a service that ran on those days would (its priorRates); labelled with it",
    )
    .option(
      '--history <files>',
      "boa: its online estimator holds these other traces' submissions, back to back before the trace's first arrival, as the rate window of a service that ran through those days would (their jobs are not run); labelled with it",
    )
    .option(
      '--history-gap-hours <h>',
      'with --history: hours without submissions between its traces and before the trace (default: a minute; 16 after 8-hour traces makes working days)',
    )
    .option('--workers <n>', 'worker threads (default: available cores)')
    .option(
      '--at-paid <list>',
      'also read every policy off at these paid GPU-hours per hour, or multiples (1.2x) of the minimum (at-paid.json)',
    )
    .option(
      '--sensitivity',
      'instead of --policies: pollux-autoscale with the exploration cap on/off x utility window 15/1, against boa online and oracle',
    )
    .option('--quiet', 'no progress bar on stderr'),
);

const isBoa = (entry: CompareEntry) => entry.definition.name === 'boa';

await runMain(async () => {
  program.parse();
  const opts = program.opts<
    EngineFlags & {
      trace: string;
      apps?: string;
      policies?: string;
      sensitivity?: boolean;
      budgets?: string;
      targets: string;
      prices: string;
      out: string;
      seed: string;
      solver?: string;
      rates?: string;
      priorFrom?: string;
      history?: string;
      historyGapHours?: string;
      workers?: string;
      profiles: string;
      data: string;
      quiet?: boolean;
      atPaid?: string;
    }
  >();
  const seed = seedOption(opts.seed);
  const shared = policyOptionsFrom({ solver: opts.solver, rates: opts.rates });
  const inputs = loadSimInputs(opts); // fail fast on bad inputs, before any worker starts
  const config = engineConfigFrom(opts);
  const minimum = () =>
    new BoaPlanner(inputs.profiles, 'exact', seed).minFeasible(
      arrivalRatesPerHour(inputs.trace, inputs.apps),
    );
  const budgets = relativeList(opts.budgets ?? '1', minimum, (text) => {
    const parsed = parseBudgets(text);
    if (parsed.kind !== 'list') throw new UsageError('--budgets is required');
    return parsed.budgets;
  });
  const targets = parseList(opts.targets, '--targets').map((t) =>
    // Cluster efficiencies: refused here, not by pollux-autoscale in a worker after the other runs.
    numberOption(t, '--targets', { min: 0, exclusiveMin: true, below: 1 }),
  );
  const prices = parseList(opts.prices, '--prices').map((p) =>
    numberOption(p, '--prices', { min: 0, exclusiveMin: true }),
  );
  const paids = opts.atPaid
    ? relativeList(opts.atPaid, minimum, (text) => {
        if (text.includes(':')) {
          throw new UsageError(`--at-paid takes a list (1.2x,1.6x), not a range: got "${text}"`);
        }
        // "abc" was told "a number > 0", which left out the multiples this flag takes too.
        return parseList(text, '--at-paid').map((p) => {
          const paid = decimalOrNaN(p);
          if (Number.isFinite(paid) && paid > 0) return paid;
          throw new UsageError(
            `--at-paid takes paid GPU-hours per hour > 0 (40) or multiples of the minimum feasible budget (1.2x), got "${p}"`,
          );
        });
      })
    : { values: [], points: [] };
  if (opts.sensitivity === undefined && opts.policies === undefined) {
    throw new UsageError('give --policies (or --sensitivity)');
  }
  if (opts.sensitivity && opts.policies !== undefined) {
    throw new UsageError(
      '--sensitivity runs its own series (boa and pollux-autoscale settings): leave out --policies',
    );
  }
  const parsed = opts.sensitivity
    ? SENSITIVITY_ENTRIES.map((e) => ({ ...e, definition: findPolicy(e.policy) }))
    : parseList(opts.policies as string, '--policies').map((spec) =>
        asUsage(() => parsePolicyEntry(spec, findPolicy)),
      );
  // A knob flag no selected policy reads was dropped without a word (pollux-autoscale --budgets 1x ran
  // its targets, exit 0: found in a trial); simulate refuses such a flag too. Defaults are not given.
  for (const [knob, flag] of [
    ['budget', '--budgets'],
    ['target', '--targets'],
    ['price', '--prices'],
  ] as const) {
    const given =
      flag === '--budgets'
        ? opts.budgets !== undefined
        : program.getOptionValueSource(flag.slice(2)) === 'cli';
    if (given && !parsed.some((e) => e.definition.knob === knob)) {
      const readers = POLICIES.filter((p) => p.knob === knob).map((p) => p.name);
      throw new UsageError(
        `${flag} applies to policies whose knob is a ${knob} (${readers.join(', ')}); none of --policies reads it`,
      );
    }
  }
  // Only a policy whose knob is a budget needs --budgets (pollux-autoscale alone sweeps --targets).
  const needBudgets = parsed.filter((e) => e.definition.knob === 'budget').map((e) => e.definition.name);
  if (opts.budgets === undefined && config.cluster === undefined && needBudgets.length > 0) {
    throw new UsageError(
      `give --budgets for ${[...new Set(needBudgets)].join(', ')} (or --cluster, on which fixed-cluster policies run once)`,
    );
  }
  if (opts.budgets !== undefined && parsed.some((e) => e.definition.name === 'boa'))
    refuseBelowServiceFloor(budgets.values, inputs.profiles, config, `--budgets ${opts.budgets}`);
  const priorFiles = opts.priorFrom ? parseList(opts.priorFrom, '--prior-from') : [];
  const historyFiles = opts.history ? parseList(opts.history, '--history') : [];
  // Both are boa's estimator's: without a boa series they would be dropped without a word.
  // --rates is boa's too: a prior or history only goes with online rates (boaSettings refuses any other),
  // so with --rates oracle or prior every boa run was skipped and the comparison went on without boa.
  const onlineBoa = parsed.some(
    (e) => e.definition.name === 'boa' && (e.options?.rates ?? shared.rates ?? 'online') === 'online',
  );
  for (const [files, flag] of [
    [priorFiles, '--prior-from'],
    [historyFiles, '--history'],
  ] as const) {
    if (files.length > 0 && !onlineBoa)
      throw new UsageError(
        `${flag} applies to boa (online rates) only: add boa to --policies` +
          (shared.rates && shared.rates !== 'online' ? `, and leave out --rates ${shared.rates}` : ''),
      );
  }
  let entries = parsed;
  if (priorFiles.length > 0)
    entries = withPrior(entries, priorFrom(priorFiles, opts.trace, inputs.apps), priorFiles.length);
  if (opts.historyGapHours !== undefined && historyFiles.length === 0)
    throw new UsageError('--history-gap-hours applies to --history: give the traces it separates');
  const gapHours =
    opts.historyGapHours === undefined
      ? 0
      : numberOption(opts.historyGapHours, '--history-gap-hours', { min: 0 });
  if (historyFiles.length > 0)
    entries = withHistory(
      entries,
      historyFrom(historyFiles, opts.trace, inputs.apps, gapHours),
      historyFiles.length,
      gapHours,
    );
  // --rates and --solver are boa's: given to every policy, a baseline's series read "(oracle rates)" and
  // boa-price refused every point.
  if ((shared.rates !== undefined || shared.solver !== undefined) && !entries.some(isBoa)) {
    throw new UsageError(
      `--${shared.rates !== undefined ? 'rates' : 'solver'} applies to boa only: add boa to --policies`,
    );
  }
  const withShared = entries.map((e) =>
    isBoa(e) ? { ...e, options: optionsForPolicy(e.definition, shared, e.options, e.label) } : e,
  );
  const swept = compareTasks(withShared, { budget: budgets.values, target: targets, price: prices });
  const fixedMode = (policy: string) => findPolicy(policy).mode === 'fixed';
  const tasks =
    config.cluster === undefined
      ? swept
      : oneRunPerFixedSeries(swept, fixedMode).filter((task) => {
          // No --budgets: only the fixed-cluster policies (sized by the cluster) have a point to run.
          const keep =
            opts.budgets !== undefined || fixedMode(task.policy) || findPolicy(task.policy).knob !== 'budget';
          if (!keep)
            process.stderr.write(`skipped ${task.label ?? task.policy}: give --budgets to sweep it\n`);
          return keep;
        });
  const setup: CompareSetup = {
    trace: opts.trace,
    ...(opts.apps ? { apps: opts.apps } : {}),
    profiles: opts.profiles,
    data: opts.data,
    seed,
    config,
  };
  prepareOutDir(opts.out);
  const earlier = existsSync(join(opts.out, 'results.json'));
  const workers = opts.workers
    ? numberOption(opts.workers, '--workers', { min: 1, integer: true })
    : availableParallelism();
  const bar = progressBar('compare', tasks.length, !opts.quiet);
  const began = performance.now();
  const replies = await runPool<CompareTask, SimResult>(
    new URL('./lib/compare-worker-entry.mjs', import.meta.url),
    setup,
    tasks,
    workers,
    (_reply, done) => bar.tick(done),
  );
  bar.stop();

  const rows: CompareRow[] = [];
  replies.forEach((reply, i) => {
    const task = tasks[i] as CompareTask;
    const knob = findPolicy(task.policy).knob;
    const at = `${task.policy} at ${knob} ${task.options[knob]}`;
    if (reply.error) {
      if (!SKIPPABLE.includes(reply.error.name) && !isPolicyOptionsError(reply.error.name))
        throw new Error(`${at}: ${reply.error.name}: ${reply.error.message}`);
      process.stderr.write(`skipped ${at}: ${reply.error.message}\n`);
    } else
      rows.push({
        ...(reply.result as SimResult),
        knob,
        ...(task.label ? { label: task.label } : {}),
        trace: basename(opts.trace, extname(opts.trace)),
        engine: config,
      });
  });
  // A run that did not finish every job (cut off by --horizon-days) is in results.json only: say so,
  // or its point is missing from the charts without a word.
  for (const row of rows.filter((r) => r.completed < r.jobs)) {
    process.stderr.write(
      `left out of the charts and at-paid: ${seriesOf(row)} at ${row.knob} ${row[row.knob]} ` +
        `(${row.completed} of ${row.jobs} jobs done)\n`,
    );
  }
  const table = paids.values.length > 0 ? atPaid(rows, paids.points) : undefined;
  // An earlier run's table beside these runs would be read as theirs (comparison-table, compare-merge).
  const stale = join(opts.out, 'at-paid.json');
  const removeStale = table === undefined && existsSync(stale);
  await writeRunOutputs(
    opts.out,
    rows,
    opts.apps,
    paids.points,
    table !== undefined ? `${JSON.stringify(table, null, 2)}\n` : removeStale ? null : undefined,
  );
  if (earlier) process.stderr.write(`replaced the results of an earlier compare in ${opts.out}\n`);
  if (removeStale)
    process.stderr.write(`removed ${stale}: an earlier run's; give --at-paid to read these runs off\n`);
  if (config.cluster !== undefined) process.stdout.write(clusterMetricsTable(rows));
  if (table !== undefined) {
    if (opts.sensitivity) process.stdout.write(sensitivityTable(table));
    else {
      process.stdout.write(atPaidTable(table));
      process.stdout.write(atPaidTable(table, 'p95JctSeconds', 'p95 JCT (s) at the same paid usages'));
    }
    process.stdout.write(atPaidGaps(rows, table));
  }
  if (!opts.quiet) {
    // Where the output went, last: the tables above scroll it away otherwise (found by a newcomer).
    const seconds = ((performance.now() - began) / 1000).toFixed(1);
    const used = Math.min(workers, tasks.length);
    process.stderr.write(
      `${counted(rows.length, 'run')} in ${seconds} s on ${counted(used, 'worker')}; results in ${opts.out}\n`,
    );
  }
});

function counted(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
