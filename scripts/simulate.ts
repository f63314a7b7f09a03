/**
 * One trace-driven simulation of one policy.
 *   npm run -s simulate -- --trace FILE [--apps a,b] --policy NAME [--budget B] [--target C] [--seed N]
 *     [--solver exact|paper] [--rates online|prior|oracle] [--format table|json] [engine flags]
 */
import { Command, Option } from 'commander';
import { POLICIES } from '../src/sim/policies/index.ts';
import { simulate, truthProvider } from '../src/sim/run.ts';
import { emit, runMain } from './lib/inputs.ts';
import { asUsage, numberOption } from './lib/sim-args.ts';
import {
  type EngineFlags,
  engineConfigFrom,
  loadSimInputs,
  policyOptionsFrom,
  resultTable,
  withSimulationOptions,
} from './lib/sim-setup.ts';

const program = withSimulationOptions(
  new Command('simulate')
    .description('Simulate one scheduling policy on a workload trace against the measured job model')
    .requiredOption('--trace <file>', 'workload CSV (name,time,application,num_replicas,batch_size)')
    .option('--apps <list>', 'only these applications, comma-separated (rates keep the whole file span)')
    .requiredOption('--policy <name>', `one of: ${POLICIES.map((p) => p.name).join(', ')}`)
    .option(
      '--budget <b>',
      'GPU-hours per hour (boa), max GPUs (fixed-request), cluster GPUs (fixed policies)',
    )
    .option('--target <c>', 'target efficiency (policies whose knob is a target)')
    .option('--solver <name>', 'boa: exact or paper')
    .option(
      '--rates <source>',
      "boa: online (default, as the service estimates them), prior (online, starting from the trace's rates, as the demo's --prior trace) or oracle (the trace's rates)",
    )
    .option('--seed <n>', 'random seed', '1')
    .addOption(new Option('--format <format>', 'output').choices(['table', 'json']).default('table'))
    .option('--out <file>', 'write here instead of stdout')
    .showHelpAfterError(),
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
      solver?: string;
      rates?: string;
    }
  >();
  const inputs = loadSimInputs(opts);
  const options = policyOptionsFrom(opts);
  const config = engineConfigFrom(opts);
  const seed = numberOption(opts.seed, '--seed', { integer: true });
  const { result } = asUsage(() =>
    simulate({
      trace: inputs.trace,
      apps: inputs.apps,
      policy: opts.policy,
      options,
      seed,
      profiles: inputs.profiles,
      truthOf: truthProvider(inputs.dataDir),
      config,
    }),
  );
  emit(opts.format === 'json' ? `${JSON.stringify(result)}\n` : resultTable(result), opts.out);
});
