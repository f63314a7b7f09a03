/**
 * Hand-built inputs shared by the policy tests: job, node and cluster views, GPUs used per node and a
 * policy context on 4-GPU nodes. Each policy's folder keeps its own profiles (and oracle) in its
 * fakes.ts and adapts these defaults there when its tests need others.
 */
import type { ClassProfile, ProfileFile } from '../../../src/core/profile.ts';
import type {
  Allocation,
  ClusterView,
  GoodputOracle,
  JobView,
  NodeView,
  PolicyContext,
} from '../../../src/sim/policy.ts';

/** A fresh job of class "lin" (the linear class of the lyra and ones fakes), arrived at 0, asking 1 GPU. */
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

/** `count` ready 4-GPU nodes numbered from `firstId`. */
export function nodes(count: number, fields: Partial<NodeView> = {}, firstId = 0): NodeView[] {
  return Array.from({ length: count }, (_, i) => ({
    id: firstId + i,
    gpus: 4,
    ready: true,
    readyAt: 0,
    ...fields,
  }));
}

/** A fixed cluster of these nodes (and no more) at 1 h. */
export function clusterView(nodeViews: readonly NodeView[], fields: Partial<ClusterView> = {}): ClusterView {
  return {
    now: 3600,
    gpusPerNode: 4,
    mode: 'fixed',
    nodes: nodeViews,
    maxNodes: nodeViews.length,
    ...fields,
  };
}

/** GPUs each node gives out in these allocations. */
export function gpusPerNodeUsed(allocations: ReadonlyMap<number, Allocation>): Map<number, number> {
  const used = new Map<number, number>();
  for (const allocation of allocations.values()) {
    for (const id of allocation) used.set(id, (used.get(id) ?? 0) + 1);
  }
  return used;
}

/** A profile file of these classes on 4-GPU nodes. */
export function profileFile(classes: ClassProfile[]): ProfileFile {
  return { version: 1, instanceType: 'g4dn.12xlarge', gpusPerNode: 4, classes };
}

/** For policies that plan on the profiles only: fails the test if asked. */
export const noOracle: GoodputOracle = {
  goodput() {
    throw new Error('these policies plan on the profiles, never on the oracle');
  },
};

/** A context on 4-GPU nodes, 60 s ticks and 30 s rescales, seed 1, no profiles and no oracle. */
export function policyContext(fields: Partial<PolicyContext> = {}): PolicyContext {
  return {
    profiles: profileFile([]),
    gpusPerNode: 4,
    tickSeconds: 60,
    rescaleSeconds: 30,
    oracle: noOracle,
    traceRatesPerHour: {},
    seed: 1,
    ...fields,
  };
}
