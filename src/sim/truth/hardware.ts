/**
 * The ground truth on GPU types other than the measured t4, and of jobs interleaved on the same GPUs.
 *
 * An optimizer step on t4 splits into compute (step time - the all-reduce's sync time, accumulation
 * steps included) and communication (sync time), both from the measured Pollux tables. On another type:
 * - compute scales by a per-class blend of the types' tensor throughput and memory bandwidth ratios
 *   (COMPUTE_BOUND: the share that follows throughput, the rest bandwidth);
 * - communication across nodes scales by the instances' network bandwidth ratio; within one node it is
 *   kept (PCIe or NVLink differences are not modelled).
 * Co-location (CUCKOO's interleaving, after Muri): the jobs of a group take turns on the GPUs and the
 * network, so one round of every member's iteration takes the larger of the summed compute, the summed
 * communication and the slowest member's own iteration, inflated by the interference the stages
 * overlapping causes (Muri's estimate, which ignores it, erred by 20.2% on average: CUCKOO Table 2).
 * Each member then runs at its isolated rate x its own iteration / that round.
 * Sources and caveats of every number: data/README.md.
 */
import { GPU_TYPE_SPECS, type GpuType } from '../gpu-types.ts';
import type { AppName } from './apps.ts';
import type { BatchConfig } from './goodput.ts';
import type { JobTruth } from './model.ts';
import { numNodes, type Placement } from './placement.ts';

/** Share of each class's compute that follows tensor throughput (the rest: memory bandwidth). Assumed. */
export const COMPUTE_BOUND: Readonly<Record<AppName, number>> = {
  cifar10: 0.7,
  imagenet: 0.7,
  yolov3: 0.7,
  bert: 0.5,
  deepspeech2: 0.4,
  ncf: 0.2,
};

/**
 * Forward share of forward + backward: CUCKOO Table 3 (ResNet 37 ms forward, 76 ms backward; BERT 72
 * and 61); the other classes take the common backward = 2 x forward.
 */
export const FORWARD_SHARE: Readonly<Record<AppName, number>> = {
  cifar10: 37 / 113,
  imagenet: 37 / 113,
  yolov3: 37 / 113,
  bert: 72 / 133,
  deepspeech2: 1 / 3,
  ncf: 1 / 3,
};

/** Default co-location interference: the round is 20% longer than Muri's no-interference bound. */
export const COLOCATION_INTERFERENCE = 0.2;

/** One optimizer step's compute and communication seconds. */
export interface StepSplit {
  readonly compute: number;
  readonly comm: number;
}

const t4 = GPU_TYPE_SPECS.t4;

function computeFactor(app: string, type: GpuType): number {
  if (type === 't4') return 1;
  const spec = GPU_TYPE_SPECS[type];
  const w = COMPUTE_BOUND[app as AppName] ?? 0.5;
  return w * (t4.tensorTflops / spec.tensorTflops) + (1 - w) * (t4.memoryGBps / spec.memoryGBps);
}

function commFactor(type: GpuType, nodes: number): number {
  if (type === 't4' || nodes <= 1) return 1;
  return t4.networkGbps / GPU_TYPE_SPECS[type].networkGbps;
}

/** The step of `config` at `placement` on t4, split into compute and communication. */
export function stepSplitT4(truth: JobTruth, placement: Placement, config: BatchConfig): StepSplit {
  const sync = truth.stepTimes(placement, config.atomicBsz).syncTime;
  const comm = Math.min(Math.max(sync, 0), config.timePerStep);
  return { compute: config.timePerStep - comm, comm };
}

/** The same step on another GPU type. */
export function stepSplitOn(app: string, type: GpuType, placement: Placement, split: StepSplit): StepSplit {
  if (type === 't4') return split;
  return {
    compute: split.compute * computeFactor(app, type),
    comm: split.comm * commFactor(type, numNodes(placement)),
  };
}

/** t4 step time / the type's: how much faster the job runs there (1 on t4). */
export function typeSpeed(app: string, type: GpuType, placement: Placement, split: StepSplit): number {
  if (type === 't4') return 1;
  const on = stepSplitOn(app, type, placement, split);
  return (split.compute + split.comm) / (on.compute + on.comm);
}

/**
 * Each member's rate while interleaved, as a fraction of its isolated rate on the same GPUs: its own
 * step / the group's round. A group of one runs at 1.
 */
export function colocationRates(
  members: readonly StepSplit[],
  interference = COLOCATION_INTERFERENCE,
): number[] {
  if (members.length <= 1) return members.map(() => 1);
  let compute = 0;
  let comm = 0;
  let slowest = 0;
  for (const m of members) {
    compute += m.compute;
    comm += m.comm;
    slowest = Math.max(slowest, m.compute + m.comm);
  }
  const round = Math.max(compute, comm, slowest) * (1 + interference);
  return members.map((m) => Math.min(1, (m.compute + m.comm) / round));
}
