/**
 * Hand-built inputs for the Lyra tests: a small profile whose times are easy to compute by hand, and
 * job and cluster views.
 */
import type { ClassProfile } from '../../../../src/core/profile.ts';
import type { ClusterView, JobView, NodeView, PolicyContext } from '../../../../src/sim/policy.ts';

/**
 * "lin": two epochs of 1200 s of 1-GPU work each, linear speedup at 1, 2, 4 and 8 GPUs.
 * "flat": one epoch of 600 s that no second GPU speeds up (1, 2 and 4 listed).
 */
export const CLASSES: ClassProfile[] = [
  {
    name: 'lin',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [
      { workSeconds: 1200, speedup: { '1': 1, '2': 2, '4': 4, '8': 8 } },
      { workSeconds: 1200, speedup: { '1': 1, '2': 2, '4': 4, '8': 8 } },
    ],
  },
  {
    name: 'flat',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [{ workSeconds: 600, speedup: { '1': 1, '2': 1, '4': 1 } }],
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
        throw new Error('these policies plan on the profiles, never on the oracle');
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
