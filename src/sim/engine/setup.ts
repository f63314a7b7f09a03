/**
 * Setting a run up: the jobs with their ground truth and statistical-epoch split, the fixed cluster's
 * size, and the goodput oracle some baselines get.
 */
import type { ProfileFile } from '../../core/profile.ts';
import type { TraceJob } from '../../core/trace.ts';
import { type GpuType, MAX_CLUSTER_GPUS } from '../gpu-types.ts';
import type { GoodputOracle, HardwareView, PolicyOptions } from '../policy.ts';
import { isolatedSeconds, kindOf, slackFactor } from '../truth/labels.ts';
import { jobClassOf } from './job-class.ts';
import type { JobTruth } from '../truth/model.ts';
import { type EngineConfig, EngineConfigError } from './config.ts';
import { type JobClass, SimJob } from './job.ts';

export class SimulationError extends Error {
  override name = 'SimulationError';
}

/** The trace's jobs in arrival order, ids 0..n-1, each with its class's truth and epoch split. */
export function makeJobs(
  trace: readonly TraceJob[],
  profiles: ProfileFile,
  truthOf: (app: string) => JobTruth,
): SimJob[] {
  if (trace.length === 0) throw new SimulationError('the trace has no jobs to simulate');
  for (const job of trace) checkTraceJob(job);
  const classes = new Map<string, JobClass>();
  const classOf = (app: string): JobClass => {
    let cls = classes.get(app);
    if (cls === undefined) {
      cls = jobClass(app, profiles, truthOf);
      classes.set(app, cls);
    }
    return cls;
  };
  const sorted = [...trace].sort((a, b) => a.time - b.time);
  return sorted.map((job, id) => new SimJob(id, job, classOf(job.application)));
}

/**
 * The commands read traces through parseTrace, which refuses these with the line; a trace built in code
 * reaches the engine unchecked, where an infinite arrival would end the run early and report it unfinished.
 */
function checkTraceJob(job: TraceJob): void {
  const what = `trace job "${job.name}"`;
  if (!Number.isFinite(job.time) || job.time < 0)
    throw new SimulationError(
      `${what}: arrival time must be a finite number of seconds >= 0, got ${job.time}`,
    );
  if (!Number.isInteger(job.numReplicas) || job.numReplicas < 1)
    throw new SimulationError(`${what}: num_replicas must be a positive integer, got ${job.numReplicas}`);
}

function jobClass(app: string, profiles: ProfileFile, truthOf: (app: string) => JobTruth): JobClass {
  const profile = profiles.classes.find((c) => c.name === app);
  if (profile === undefined) {
    const known = profiles.classes.map((c) => c.name).join(', ');
    throw new SimulationError(`no profile for application "${app}"; the profiles have: ${known}`);
  }
  return jobClassOf(profile, truthOf(app));
}

/**
 * Each job's kind and deadline: the trace's when given, else derived (truth/labels.ts). The isolated
 * runtime is the job's alone at its request (at least 1 GPU) on t4; its deadline's, on the fastest type
 * of the cluster (the stage profiles' speed factor at that width).
 */
export function labelJobs(
  jobs: readonly SimJob[],
  trace: readonly TraceJob[],
  config: EngineConfig,
  hardware: HardwareView,
  seed: number,
): void {
  // makeJobs numbered the jobs in this (stable) arrival order.
  const sorted = [...trace].sort((a, b) => a.time - b.time);
  const runtimes = new Map<string, number>(); // per (app, width): many jobs ask alike
  jobs.forEach((job, i) => {
    const source = sorted[i] as TraceJob;
    const width = Math.max(1, job.requestedGpus);
    const key = `${job.app}/${width}`;
    let alone = runtimes.get(key);
    if (alone === undefined) {
      alone = isolatedSeconds(job.jobClass.truth, width, config.gpusPerNode);
      runtimes.set(key, alone);
    }
    job.kind = source.kind ?? kindOf(alone, config.interactiveSeconds);
    if (source.deadline !== undefined) job.deadline = source.deadline;
    else if (config.deadlineSlack !== null && Number.isFinite(alone)) {
      const fastest = Math.max(...hardware.types.map((t) => speedOf(hardware, job.app, t, width)));
      job.deadline = job.arrival + slackFactor(seed, job.id, config.deadlineSlack) * (alone / fastest);
    }
  });
}

function speedOf(hardware: HardwareView, app: string, type: GpuType, width: number): number {
  return type === 't4' ? 1 : hardware.speedFactor(app, type, width);
}

export function fixedNodes(policy: string, options: PolicyOptions, gpusPerNode: number): number {
  const budget = options.budget;
  if (budget === undefined || !(Number.isFinite(budget) && budget > 0)) {
    throw new EngineConfigError(
      `policy "${policy}" runs on a fixed cluster: give its size as a budget in GPUs`,
    );
  }
  // Every node is an object from the start: 1e9 GPUs ran out of memory with a V8 stack trace.
  if (budget > MAX_CLUSTER_GPUS) {
    throw new EngineConfigError(
      `policy "${policy}" runs on a fixed cluster of its budget in GPUs: at most ${MAX_CLUSTER_GPUS}, got ${budget}`,
    );
  }
  return Math.ceil(budget / gpusPerNode);
}

/** Goodput from the truth at a job's current progress, for policies that would fit it online. */
export function oracleFor(jobs: ReadonlyMap<number, SimJob>): GoodputOracle {
  return {
    goodput(jobId, gpusPerNode) {
      const job = jobs.get(jobId);
      if (job === undefined) throw new RangeError(`the oracle knows no job ${jobId}`);
      return job.jobClass.truth.bestConfig(gpusPerNode, job.progress)?.goodput ?? 0;
    },
  };
}
