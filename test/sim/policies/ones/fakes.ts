/**
 * Hand-checkable inputs for the ONES and cuckoo tests: a two-class profile whose times are easy to
 * work out, and job, node and cluster views.
 */
import type { ProfileFile } from '../../../../src/core/profile.ts';
import type {
  ClusterView,
  GoodputOracle,
  JobView,
  NodeView,
  PolicyContext,
} from '../../../../src/sim/policy.ts';

/**
 * `lin`: 2 epochs of 100 and 200 s on 1 GPU, perfectly linear up to 8 GPUs (its peak).
 * `dip`: 1 epoch of 400 s; speedup 2 at 2 GPUs, 2 at 4 (no gain), 4 at 8.
 */
export const PROFILES: ProfileFile = {
  version: 1,
  instanceType: 'test',
  gpusPerNode: 4,
  classes: [
    {
      name: 'lin',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [
        { workSeconds: 100, speedup: { 1: 1, 2: 2, 4: 4, 8: 8 } },
        { workSeconds: 200, speedup: { 1: 1, 2: 2, 4: 4, 8: 8 } },
      ],
    },
    {
      name: 'dip',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [{ workSeconds: 400, speedup: { 1: 1, 2: 2, 4: 2, 8: 4 } }],
    },
  ],
};

export function jobView(id: number, fields: Partial<JobView> = {}): JobView {
  return {
    id,
    name: `job-${id}`,
    app: 'lin',
    arrival: 0,
    requestedGpus: 1,
    requestedBatch: 128,
    progressFraction: 0,
    statEpoch: 0,
    allocation: [],
    rescales: 0,
    restartingUntil: null,
    attainedGpuSeconds: 0,
    runSeconds: 0,
    ...fields,
  };
}

export function nodes(count: number, fields: Partial<NodeView> = {}): NodeView[] {
  return Array.from({ length: count }, (_, id) => ({ id, gpus: 4, ready: true, readyAt: 0, ...fields }));
}

export function clusterView(count: number, fields: Partial<ClusterView> = {}): ClusterView {
  return { now: 3600, gpusPerNode: 4, mode: 'fixed', nodes: nodes(count), maxNodes: count, ...fields };
}

const noOracle: GoodputOracle = {
  goodput() {
    throw new Error('these policies plan from the profiles and never ask the oracle');
  },
};

export function context(seed = 1): PolicyContext {
  return {
    profiles: PROFILES,
    gpusPerNode: 4,
    tickSeconds: 60,
    rescaleSeconds: 30,
    oracle: noOracle,
    traceRatesPerHour: {},
    seed,
  };
}
