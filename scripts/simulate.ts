/**
 * One trace-driven simulation of one policy. --budget may be a multiple of the minimum feasible budget
 * at the trace's rates (1.2x), as in compare; a boa budget the service refuses is refused.
 *   npm run -s simulate -- --trace FILE [--apps a,b] --policy NAME [--budget B|Mx] [--target C] [--price P] [--seed N]
 *     [--solver exact|paper] [--rates online|prior|oracle] [--unspent] [--format table|json] [engine flags]
 */
import { Option } from 'commander';
import { arrivalRatesPerHour } from '../src/core/trace.ts';
import { BoaPlanner } from '../src/sim/policies/boa/planner.ts';
import { findPolicy, POLICIES } from '../src/sim/policies/index.ts';
import type { PolicyDefinition, PolicyOptions } from '../src/sim/policy.ts';
import { VARIANTS_HELP } from './lib/boa-variants.ts';
import { simulate, truthProvider } from '../src/sim/run.ts';
import { type UnspentSplit, UnspentAccount } from '../src/sim/unspent.ts';
import { parsePolicyEntry, seriesOf } from './lib/compare-report.ts';
import { checkOut, emit, runMain, UsageError, scriptProgram } from './lib/inputs.ts';
import { relativeList } from './lib/compare-relative.ts';
import { simulationProgress } from './lib/sim-progress.ts';
import { refuseBelowServiceFloor } from './lib/service-floor.ts';
import { asUsage, decimalOrNaN, seedOption } from './lib/sim-args.ts';
import {
  type EngineFlags,
  engineConfigFrom,
  loadSimInputs,
  optionsForPolicy,
  policyOptionsFrom,
  resultTable,
  withSimulationOptions,
} from './lib/sim-setup.ts';

const program = withSimulationOptions(
  scriptProgram('simulate')
    .description('Simulate one scheduling policy on a workload trace against the measured job model')
    .requiredOption('--trace <file>', 'workload CSV (name,time,application,num_replicas,batch_size)')
    .option('--apps <list>', 'only these applications, comma-separated (rates keep the whole file span)')
    .requiredOption(
      '--policy <name>',
      `one of: ${POLICIES.map((p) => p.name).join(', ')}; or a variant as in compare: ${VARIANTS_HELP}`,
    )
    .option(
      '--budget <b>',
      'GPU-hours per hour (boa), max GPUs (fixed-request), cluster GPUs (fixed policies); 1.2x: times the minimum feasible',
    )
    .option('--target <c>', 'target efficiency (policies whose knob is a target)')
    .option('--price <p>', 'boa-price: seconds of JCT one more GPU-second must save')
    .option('--solver <name>', 'boa: exact or paper')
    .option(
      '--rates <source>',
      "boa: online (default, as the service estimates them), prior (online, starting from the trace's rates, as the demo's --prior trace) or oracle (the trace's rates)",
    )
    .option('--seed <n>', 'random seed', '1')
    .option(
      '--unspent',
      'where paid fell below --budget: jobs waiting, GPUs running jobs could use (>= half a GPU of speedup each), or nothing could use',
    )
    .addOption(new Option('--format <format>', 'output').choices(['table', 'json']).default('table'))
    .option('--out <file>', 'write here instead of stdout')
    .option('--quiet', 'no progress bar on stderr (drawn only when stderr is a terminal)'),
);

await runMain(() => {
  program.parse();
  const opts = program.opts<
    EngineFlags & {
      trace: string;
      apps?: string;
      policy: string;
      seed: string;
      format: 'table' | 'json';
      profiles: string;
      data: string;
      out?: string;
      budget?: string;
      target?: string;
      price?: string;
      solver?: string;
      rates?: string;
      unspent?: boolean;
      quiet?: boolean;
    }
  >();
  checkOut(opts.out);
  const inputs = loadSimInputs(opts);
  const entry = asUsage(() => parsePolicyEntry(opts.policy, findPolicy));
  const seed = seedOption(opts.seed);
  let least: number | undefined;
  const minimum = () =>
    (least ??= new BoaPlanner(inputs.profiles, 'exact', seed).minFeasible(
      arrivalRatesPerHour(inputs.trace, inputs.apps),
    ));
  // A multiple of the minimum (1.5x) as compare takes it: refused here, it was accepted there.
  const budget = opts.budget === undefined ? undefined : String(oneBudget(opts.budget, minimum));
  const options = optionsForPolicy(
    entry.definition,
    policyOptionsFrom({ ...opts, budget }),
    entry.options,
    opts.policy,
  );
  const config = engineConfigFrom(opts);
  if (opts.unspent && options.budget === undefined) {
    throw new UsageError('--unspent needs --budget: the spend it splits what was left of');
  }
  refuseMissingKnob(opts.policy, entry.definition, options, opts.cluster !== undefined);
  if (entry.definition.name === 'boa' && options.budget !== undefined)
    refuseBelowServiceFloor([options.budget], inputs.profiles, config, `--budget ${opts.budget}`);
  if (entry.definition.name === 'boa' && options.budget !== undefined && options.rates !== 'oracle') {
    // Online, boa runs a budget below the load's minimum (as the service accepts one): say so, or a
    // result of days-long queues reads as boa's.
    if (options.budget < minimum() * (1 - 1e-9)) {
      process.stderr.write(
        `note: --budget ${options.budget} is below ${minimum().toFixed(2)} GPU-hours/hour, the minimum feasible ` +
          "budget at the trace's rates: every job runs on its cheapest widths and jobs queue until the budget allows them\n",
      );
    }
  }
  const account = opts.unspent
    ? new UnspentAccount(options.budget as number, new Map(inputs.profiles.classes.map((c) => [c.name, c])))
    : undefined;
  let start: number | undefined;
  // On a terminal only: stdout's table or JSON stays as it was, and a log gets no bar (compare's
  // convention is a bar unless --quiet; a bursty run took 23 s without a sign of life: a trial).
  const progress = simulationProgress(inputs, !opts.quiet && process.stderr.isTTY === true);
  const { result } = asUsage(() =>
    simulate({
      trace: inputs.trace,
      apps: inputs.apps,
      policy: entry.definition.name,
      options,
      seed,
      profiles: inputs.profiles,
      truthOf: truthProvider(inputs.dataDir),
      config,
      observer: (tick) => {
        progress.observe(tick);
        if (account) {
          start ??= tick.cluster.now;
          account.observe(tick);
        }
      },
    }),
  );
  progress.stop(result.completed);
  const unspent = account?.finish((start ?? 0) + result.spanHours * 3600);
  // Labelled as compare labels the series (boa@cap2, oracle rates): shown as plain "boa", a variant's
  // result read as the default's.
  const label = seriesOf({
    ...result,
    knob: entry.definition.knob,
    ...(entry.label ? { label: entry.label } : {}),
  });
  const shown = { ...result, ...(label === result.policy ? {} : { label }), ...(unspent ? { unspent } : {}) };
  emit(
    opts.format === 'json'
      ? `${JSON.stringify(shown)}\n`
      : resultTable(result, label) + (unspent ? unspentTable(unspent) : ''),
    opts.out,
  );
});

/**
 * A policy run without the flag its knob needs, said in flags: the policies' own words were "boa needs a
 * budget: ..., got undefined" and "give its size as a budget in GPUs", naming no flag.
 */
function refuseMissingKnob(
  spec: string,
  definition: PolicyDefinition,
  options: PolicyOptions,
  cluster: boolean,
): void {
  if (options.budget !== undefined) return;
  if (definition.mode === 'fixed' && !cluster) {
    throw new UsageError(
      `--policy ${spec} runs on a fixed cluster: give --budget N (its GPUs) or --cluster g4dn:N (nodes)`,
    );
  }
  // The autoscaled policies that hold a budget (fixed-request's is an optional cap).
  if (definition.name === 'boa' || definition.name === 'pollux-budget') {
    throw new UsageError(
      `--policy ${spec} needs --budget: paid GPU-hours per hour (40) or a multiple of the ` +
        "trace's minimum feasible budget (1.5x)",
    );
  }
}

/** --budget as a number of GPU-hours per hour or, as compare takes it, a multiple of the minimum. */
function oneBudget(text: string, minimum: () => number): number {
  const { values } = relativeList(text, minimum, (plain) => {
    if (/[,:]/.test(plain)) throw new UsageError(`--budget takes one value (40 or 1.2x), got "${text}"`);
    const value = decimalOrNaN(plain);
    // "abc" and "2X" were told "a number > 0", which left out the multiples this flag takes too.
    if (!(Number.isFinite(value) && value > 0)) {
      throw new UsageError(
        `--budget must be a number > 0 (GPU-hours per hour) or a multiple of the minimum feasible budget (1.5x), got "${text}"`,
      );
    }
    return [value];
  });
  return values[0] as number;
}

/** The split as shares of the budget's GPU-hours over the run. */
function unspentTable(split: UnspentSplit): string {
  const share = (gpuHours: number) => `${((100 * gpuHours) / split.budgetGpuHours).toFixed(1)}%`;
  return (
    `${'unspent (of the budget)'.padEnd(24)}  ${share(split.underGpuHours)}: jobs waiting ` +
    `${share(split.waitingGpuHours)}, usable by running jobs ${share(split.usableGpuHours)}, ` +
    `nothing could use ${share(split.unusableGpuHours)}\n` +
    `${'over the budget'.padEnd(24)}  ${share(split.overGpuHours)}\n`
  );
}
