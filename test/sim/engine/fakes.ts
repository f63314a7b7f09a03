/**
 * Small stand-ins for engine tests: a job truth with exactly linear speedup (progress per second =
 * GPUs x `rate`, equal data epochs), profiles to match, and a policy driven by a function.
 */
import type { ProfileFile } from '../../../src/core/profile.ts';
import type { TraceJob } from '../../../src/core/trace.ts';
import type { Decision, Policy, PolicyDefinition } from '../../../src/sim/policy.ts';
import type { JobTruth } from '../../../src/sim/truth/model.ts';

export function linearTruth(dataEpochs: number, progressPerEpoch: number, rate = 1): JobTruth {
  const epochEnds = Array.from({ length: dataEpochs }, (_, e) => (e + 1) * progressPerEpoch);
  const total = dataEpochs * progressPerEpoch;
  const dataEpochAt = (p: number) => Math.min(dataEpochs - 1, Math.floor(p / progressPerEpoch));
  const config = (placement: readonly number[]) => {
    const gpus = placement.reduce((a, b) => a + b, 0);
    const goodput = gpus * rate;
    return { atomicBsz: 1, accum: 0, totalBatch: gpus, gain: 1, timePerStep: 1 / goodput, goodput };
  };
  return {
    spec: { name: 'fake', initBatch: 1, maxBatch: 1024, minLocalBsz: 1, maxLocalBsz: 1, dataEpochs },
    epochEnds,
    totalProgress: total,
    dataEpochAt,
    stepTimes: () => ({ stepTime: 1, syncTime: 0 }),
    bestConfigInEpoch: (placement) => config(placement),
    bestConfig: (placement) => config(placement),
  };
}

export function fakeProfiles(classes: Record<string, number>): ProfileFile {
  return {
    version: 1,
    instanceType: 'g4dn.12xlarge',
    gpusPerNode: 4,
    classes: Object.entries(classes).map(([name, epochs]) => ({
      name,
      weight: 1,
      rescaleSeconds: 30,
      epochs: Array.from({ length: epochs }, () => ({
        workSeconds: 100,
        speedup: { '1': 1, '2': 2, '4': 4 },
      })),
    })),
  };
}

export function traceJob(name: string, time: number, application = 'fake', numReplicas = 1): TraceJob {
  return { name, time, application, numReplicas, batchSize: 1 };
}

export function scriptedPolicy(
  decide: Policy['decide'],
  mode: 'fixed' | 'autoscaled' = 'autoscaled',
  hooks: Pick<Policy, 'onArrival' | 'onCompletion'> = {},
): PolicyDefinition {
  return {
    name: 'scripted',
    mode,
    knob: 'budget',
    describe: 'test policy',
    create: () => ({ name: 'scripted', decide, ...hooks }),
  };
}

/**
 * Every active job on `width` GPUs of one ready node, first come first served, a running job left where
 * it is; nodes to fit them all.
 */
export function greedyDecide(width: number): Policy['decide'] {
  return (cluster, jobs): Decision => {
    const free = new Map(cluster.nodes.filter((n) => n.ready).map((n) => [n.id, n.gpus]));
    const allocations = new Map<number, readonly number[]>();
    for (const job of jobs) {
      const node = job.allocation[0];
      if (node === undefined || !free.has(node)) continue;
      allocations.set(job.id, job.allocation);
      free.set(node, (free.get(node) as number) - job.allocation.length);
    }
    for (const job of jobs) {
      if (allocations.has(job.id)) continue;
      const node = [...free].find(([, gpus]) => gpus >= width);
      if (!node) continue;
      allocations.set(job.id, Array(width).fill(node[0]));
      free.set(node[0], node[1] - width);
    }
    return { allocations, desiredNodes: Math.ceil((jobs.length * width) / cluster.gpusPerNode) };
  };
}
