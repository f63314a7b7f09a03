/**
 * Hand-built inputs for the Cornucopia tests: small profiles with speedups easy to reason about, and job
 * and cluster views.
 */
import type { ClassProfile } from '../../../../src/core/profile.ts';
import type { ClusterView, JobView, NodeView, PolicyContext } from '../../../../src/sim/policy.ts';

const linear = { '1': 1, '2': 2, '3': 3, '4': 4, '8': 8 };

/**
 * "short": 10 minutes on 1 GPU (interactive), linear speedup to 8 GPUs.
 * "long": two 3-hour epochs (batch); linear in its first epoch, no gain past 2 GPUs in its second.
 * "flat": 1 hour (interactive) that no second GPU speeds up.
 */
export const CLASSES: ClassProfile[] = [
  { name: 'short', weight: 1, rescaleSeconds: 30, epochs: [{ workSeconds: 600, speedup: linear }] },
  {
    name: 'long',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [
      { workSeconds: 10_800, speedup: linear },
      { workSeconds: 10_800, speedup: { '1': 1, '2': 2, '4': 2 } },
    ],
  },
  {
    name: 'flat',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [{ workSeconds: 3600, speedup: { '1': 1, '4': 1 } }],
  },
];

export function context(classes: ClassProfile[] = CLASSES): PolicyContext {
  return {
    profiles: { version: 1, instanceType: 'g4dn.12xlarge', gpusPerNode: 4, classes },
    gpusPerNode: 4,
    tickSeconds: 60,
    rescaleSeconds: 30,
    oracle: {
      goodput: () => {
        throw new Error('cornucopia plans on the profiles, never on the oracle');
      },
    },
    traceRatesPerHour: {},
    seed: 1,
  };
}

export function jobView(id: number, fields: Partial<JobView> = {}): JobView {
  return {
    id,
    name: `job-${id}`,
    app: 'short',
    arrival: id,
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

export function nodes(count: number, fields: Partial<NodeView> = {}, firstId = 0): NodeView[] {
  return Array.from({ length: count }, (_, i) => ({
    id: firstId + i,
    gpus: 4,
    ready: true,
    readyAt: 0,
    ...fields,
  }));
}

export function clusterView(nodeViews: readonly NodeView[], now = 3600): ClusterView {
  return { now, gpusPerNode: 4, mode: 'fixed', nodes: nodeViews, maxNodes: nodeViews.length };
}
