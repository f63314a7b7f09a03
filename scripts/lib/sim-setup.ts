/** What simulate, compare and bench:sim share: engine and policy options, inputs, the result table. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ProfileFile } from '../../src/core/profile.ts';
import { MIN_TRACE_SPAN_HOURS, type TraceJob } from '../../src/core/trace.ts';
import type { EngineConfig } from '../../src/sim/engine/config.ts';
import { parseClusterSpec } from '../../src/sim/gpu-types.ts';
import { APP_NAMES, isAppName } from '../../src/sim/truth/apps.ts';
import type { PolicyDefinition, PolicyOptions } from '../../src/sim/policy.ts';
import type { SimResult } from '../../src/sim/run.ts';
import { loadProfileFile, loadTrace, parseList, readText, UsageError } from './inputs.ts';
import { DEFAULT_PROFILES, REPO_ROOT } from './paths.ts';
import { numberOption } from './sim-args.ts';

/** The measured Pollux data, committed under data/pollux (Apache-2.0, see data/pollux/NOTICE). */
export const DEFAULT_DATA = resolve(REPO_ROOT, 'data/pollux');

/** Engine flags as commander gives them (strings), all optional. */
export interface EngineFlags {
  readonly tick?: string;
  readonly boot?: string;
  readonly releaseLag?: string;
  readonly rescale?: string;
  readonly maxNodes?: string;
  readonly horizonDays?: string;
  readonly cluster?: string;
  readonly colocationInterference?: string;
  readonly deadlines?: string;
  readonly interactiveMinutes?: string;
}

/** The ground truth, the profiles and the engine flags, declared alike on every simulation command. */
export function withSimulationOptions(command: Command): Command {
  return command
    .option('--profiles <file>', 'job-class profiles the planners see', DEFAULT_PROFILES)
    .option('--data <dir>', 'measured Pollux data (the ground truth)', DEFAULT_DATA)
    .option('--tick <s>', 'scheduling tick, seconds (default 60)')
    .option('--boot <s>', 'node boot delay, seconds (default 90)')
    .option('--release-lag <s>', 'paid time after a node is released, seconds (default 30)')
    .option('--rescale <s>', 'cost of a start, restart or rescale, seconds (default 30)')
    .option('--max-nodes <n>', 'autoscaled node group upper bound (default 500)')
    .option('--horizon-days <d>', 'stop a stuck run this long after the last arrival (default 60)')
    .option(
      '--cluster <spec>',
      'node pools by GPU type, g4dn:8,p3:4 or a JSON file/array (types g4dn/t4, p3/v100, g5/a10g); fixed-cluster policies run on it, boa and the autoscalers only on one g4dn pool',
    )
    .option(
      '--colocation-interference <x>',
      "co-located jobs: round time over Muri's no-interference bound, minus 1 (default 0.2)",
    )
    .option(
      '--interactive-minutes <m>',
      "jobs whose isolated runtime at their request is at most this are interactive, unless the trace has a kind column (default 20, Cornucopia's)",
    )
    .option(
      '--deadlines <mode>',
      "generated (default: CUCKOO's N(8, 2) slack) or none, unless the trace has a deadline column",
    );
}

export function engineConfigFrom(flags: EngineFlags): Partial<EngineConfig> {
  const seconds = (text: string | undefined, flag: string, positive = false) =>
    text === undefined ? undefined : numberOption(text, flag, { min: 0, exclusiveMin: positive });
  const config: Record<string, unknown> = {
    cluster: flags.cluster === undefined ? undefined : clusterFrom(flags.cluster),
    colocationInterference:
      flags.colocationInterference === undefined
        ? undefined
        : numberOption(flags.colocationInterference, '--colocation-interference', { min: 0 }),
    deadlineSlack: deadlinesFrom(flags.deadlines),
    interactiveSeconds:
      flags.interactiveMinutes === undefined
        ? undefined
        : numberOption(flags.interactiveMinutes, '--interactive-minutes', { min: 0 }) * 60,
    tickSeconds: seconds(flags.tick, '--tick', true),
    bootSeconds: seconds(flags.boot, '--boot'),
    releaseLagSeconds: seconds(flags.releaseLag, '--release-lag'),
    rescaleSeconds: seconds(flags.rescale, '--rescale'),
    maxNodes:
      flags.maxNodes === undefined
        ? undefined
        : numberOption(flags.maxNodes, '--max-nodes', { min: 1, integer: true }),
    horizonSeconds:
      flags.horizonDays === undefined
        ? undefined
        : numberOption(flags.horizonDays, '--horizon-days', { min: 0, exclusiveMin: true }) * 86_400,
  };
  return Object.fromEntries(
    Object.entries(config).filter(([, v]) => v !== undefined),
  ) as Partial<EngineConfig>;
}

/** `--cluster` as a spec, a JSON array, or a file holding either. */
function clusterFrom(text: string): ReturnType<typeof parseClusterSpec> {
  // Read as inputs are, so a folder (or an unreadable file) is a usage error, not a stack trace.
  const file = existsSync(text);
  const spec = file ? readText(text, '--cluster file') : text;
  try {
    return parseClusterSpec(spec);
  } catch (error) {
    // A file name whose file is missing was read as a spec, and refused as "not type:nodes".
    if (!file && /[/\\]|\.json$/i.test(text)) {
      throw new UsageError(`--cluster ${text}: no such file (nor a spec such as g4dn:8,p3:4)`);
    }
    throw new UsageError(`--cluster: ${(error as Error).message}`);
  }
}

function deadlinesFrom(mode: string | undefined): null | undefined {
  if (mode === undefined || mode === 'generated') return undefined;
  if (mode === 'none') return null;
  throw new UsageError(`--deadlines must be generated or none, got "${mode}"`);
}

export interface PolicyFlags {
  readonly budget?: string;
  readonly target?: string;
  readonly price?: string;
  readonly solver?: string;
  readonly rates?: string;
}

export function policyOptionsFrom(flags: PolicyFlags): PolicyOptions {
  const options: { -readonly [K in keyof PolicyOptions]: PolicyOptions[K] } = {};
  if (flags.budget !== undefined) {
    options.budget = numberOption(flags.budget, '--budget', { min: 0, exclusiveMin: true });
  }
  if (flags.target !== undefined) {
    // A cluster efficiency (pollux-autoscale's knob): the policy refuses anything else mid-run.
    options.target = numberOption(flags.target, '--target', { min: 0, exclusiveMin: true, below: 1 });
  }
  if (flags.price !== undefined) {
    options.price = numberOption(flags.price, '--price', { min: 0, exclusiveMin: true });
  }
  if (flags.solver !== undefined) {
    if (flags.solver !== 'exact' && flags.solver !== 'paper') {
      throw new UsageError(`--solver must be exact or paper, got "${flags.solver}"`);
    }
    options.solver = flags.solver;
  }
  if (flags.rates !== undefined) {
    if (flags.rates !== 'online' && flags.rates !== 'prior' && flags.rates !== 'oracle') {
      throw new UsageError(
        `--rates must be online, prior (online from the trace's rates) or oracle (the trace's rates), got "${flags.rates}"`,
      );
    }
    options.rates = flags.rates;
  }
  return options;
}

/** Which policies read each flag-set option: any other policy would run without it, said as if applied. */
const READERS: Readonly<Record<string, (d: PolicyDefinition) => boolean>> = {
  budget: (d) => d.knob === 'budget',
  target: (d) => d.knob === 'target',
  price: (d) => d.knob === 'price',
  solver: (d) => d.name === 'boa',
  rates: (d) => d.name === 'boa',
};

/**
 * The flags' options merged with a variant's (`boa@oracle`, `boa-price@ceiling40`), refusing a flag the
 * policy does not read and a flag that contradicts the variant: either was dropped without a word and
 * then echoed in the result as if applied.
 */
export function optionsForPolicy(
  definition: PolicyDefinition,
  fromFlags: PolicyOptions,
  variant: PolicyOptions = {},
  spec = definition.name,
): PolicyOptions {
  for (const [key, value] of Object.entries(fromFlags)) {
    if (value === undefined) continue;
    const reads = READERS[key];
    if (reads && !reads(definition)) {
      const knob = definition.knob === 'budget' ? '' : `; its knob is --${definition.knob}`;
      const ceiling =
        definition.name === 'boa-price' && key === 'budget' ? ' (a ceiling: boa-price@ceilingB)' : '';
      throw new UsageError(`--${key} does not apply to ${definition.name}${ceiling}${knob}`);
    }
    const fixed = (variant as Record<string, unknown>)[key];
    if (fixed !== undefined && fixed !== value) {
      throw new UsageError(
        `--${key} ${String(value)} contradicts ${spec}, which sets ${key} ${String(fixed)}`,
      );
    }
  }
  return { ...fromFlags, ...variant };
}

export interface SimInputs {
  readonly trace: TraceJob[];
  readonly apps: string[] | undefined;
  readonly profiles: ProfileFile;
  readonly dataDir: string;
}

export function loadSimInputs(flags: {
  trace: string;
  apps?: string;
  profiles: string;
  data: string;
}): SimInputs {
  if (!existsSync(resolve(flags.data, 'traces'))) {
    throw new UsageError(`no measured data at ${flags.data} (expected traces/<app>/ there); give --data DIR`);
  }
  const trace = loadTrace(flags.trace);
  const apps = flags.apps ? parseList(flags.apps, '--apps') : undefined;
  // Checked here, not only where a run first needs the rates: in compare that is a worker thread,
  // whose error ended the whole comparison with a stack trace.
  const present = new Set(trace.map((job) => job.application));
  const absent = (apps ?? []).filter((app) => !present.has(app));
  if (absent.length > 0) {
    throw new UsageError(
      `--apps: no jobs of ${absent.join(', ')} in ${flags.trace}; it has: ${[...present].sort().join(', ')}`,
    );
  }
  const profiles = loadProfileFile(flags.profiles);
  // Every application that will run needs a profile (the planners') and measured data (the ground
  // truth). Checked here: found by a run, in compare that was a worker's error, thrown as a stack trace
  // (exit 1) after every other run had been made, without naming the trace.
  const profiled = new Set(profiles.classes.map((c) => c.name));
  for (const job of trace) {
    if (apps !== undefined && !apps.includes(job.application)) continue;
    const where = `${flags.trace}: job "${job.name}" is of application "${job.application}"`;
    if (!profiled.has(job.application)) {
      throw new UsageError(
        `${where}, which has no profile in ${flags.profiles} (it has: ${[...profiled].join(', ')}); leave it out with --apps`,
      );
    }
    if (!isAppName(job.application)) {
      throw new UsageError(
        `${where}, which has no measured data (known: ${APP_NAMES.join(', ')}); leave it out with --apps`,
      );
    }
  }
  return { trace, apps, profiles, dataDir: flags.data };
}

export { DEFAULT_PROFILES };

function yardstickWords(result: SimResult): string {
  return result.arrivalSpanHours >= MIN_TRACE_SPAN_HOURS
    ? 'all paid over the arrival span'
    : 'all paid, per hour: the arrivals span under an hour, read as one';
}

/**
 * The most paid in any 24 hours, per hour. A run shorter than that has one such window, all of it: said
 * so, or an 8-hour trace's "6.32" read as a contradiction of the "20.61" paid over its hours (found
 * trying boa as a newcomer).
 */
function peakDayWords(result: SimResult): string {
  const perHour = `${result.peakDayPaidGpuHoursPerHour.toFixed(2)} GPU-hours/hour`;
  return result.spanHours < 24
    ? `${perHour} (the run is ${result.spanHours.toFixed(2)} h: all it paid, over 24 h)`
    : perHour;
}

/** A result as an aligned two-column table for people; `label` names the series (a boa variant). */
export function resultTable(result: SimResult, label = result.policy): string {
  const hours = (s: number) =>
    Number.isFinite(s) ? `${s.toFixed(0)} s (${(s / 3600).toFixed(2)} h)` : 'n/a';
  const rows: Array<[string, string]> = [
    ['policy', label],
    // Two decimals: a multiple of the minimum (--budget 1.6x) came out as 19.347326.
    ['budget', result.budget === null ? '-' : `${+result.budget.toFixed(2)}`],
    ...(result.target === null ? [] : [['target', `${result.target}`] as [string, string]]),
    ...(result.price === null ? [] : [['price', `${result.price}`] as [string, string]]),
    ...(result.solver === null ? [] : [['solver', result.solver] as [string, string]]),
    ['jobs completed', `${result.completed} of ${result.jobs}`],
    ['average JCT', hours(result.avgJctSeconds)],
    ['P95 JCT', hours(result.p95JctSeconds)],
    ['average queueing', hours(result.avgQueueSeconds)],
    // The yardstick: everything paid over the arrival span (the drain after the last arrival counts in).
    ['paid GPU-hours/hour', `${result.paidGpuHoursPerHour.toFixed(2)} (${yardstickWords(result)})`],
    ['allocated GPU-hours/hour', `${result.allocatedGpuHoursPerHour.toFixed(2)} (the same)`],
    // What a budget held over the service's 24-hour window would have had to allow.
    ['most paid in 24 h', peakDayWords(result)],
    ['rescales', `${result.rescales}`],
    ['peak nodes', `${result.peakNodes}`],
    ...(result.cluster === null ? [] : [['cluster', result.cluster] as [string, string]]),
    [
      'deadlines met',
      Number.isFinite(result.deadlineSatisfactionRate)
        ? `${(100 * result.deadlineSatisfactionRate).toFixed(1)}%`
        : 'n/a',
    ],
    ['interactive jobs', `${result.interactiveJobs}`],
    ['interactive queueing', hours(result.avgInteractiveQueueSeconds)],
    [
      'utilization by GPU type',
      Object.entries(result.utilizationByType)
        .map(([type, u]) => `${type} ${(100 * u).toFixed(1)}%`)
        .join(', '),
    ],
    ['run span', `${result.spanHours.toFixed(2)} h`],
    ['simulation time', `${result.simMs.toFixed(0)} ms`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return `${rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`;
}
