/**
 * Hand-built inputs for the Pollux tests: job and cluster views, and a fake GoodputOracle whose goodput
 * per job is a function of (GPUs, nodes) that each test writes down.
 */
import type {
  Allocation,
  ClusterView,
  GoodputOracle,
  JobView,
  NodeView,
  PolicyContext,
} from '../../../../src/sim/policy.ts';

export type GoodputFn = (gpus: number, nodes: number) => number;

/** Goodput = the job's function of total GPUs and node count; jobs without one have linear goodput. */
export function fakeOracle(byJob: Record<number, GoodputFn> = {}): GoodputOracle & { calls: number } {
  const oracle = {
    calls: 0,
    goodput(jobId: number, gpusPerNode: readonly number[]) {
      oracle.calls++;
      const gpus = gpusPerNode.reduce((a, b) => a + b, 0);
      const nodes = gpusPerNode.filter((g) => g > 0).length;
      return (byJob[jobId] ?? ((g: number) => g))(gpus, nodes);
    },
  };
  return oracle;
}

export const linear: GoodputFn = (gpus) => gpus;
/** No gain from a second GPU: goodput 1 at any width. */
export const flat: GoodputFn = (gpus) => (gpus > 0 ? 1 : 0);

export function jobView(id: number, fields: Partial<JobView> = {}): JobView {
  return {
    id,
    name: `job-${id}`,
    app: 'cifar10',
    arrival: 0,
    requestedGpus: 1,
    requestedBatch: 128,
    progressFraction: 0.1,
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

export function clusterView(nodeViews: readonly NodeView[], fields: Partial<ClusterView> = {}): ClusterView {
  return { now: 3600, gpusPerNode: 4, mode: 'fixed', nodes: nodeViews, maxNodes: 100, ...fields };
}

export function context(oracle: GoodputOracle, seed = 1): PolicyContext {
  return {
    profiles: { version: 1, instanceType: 'g4dn.12xlarge', gpusPerNode: 4, classes: [] },
    gpusPerNode: 4,
    tickSeconds: 60,
    rescaleSeconds: 30,
    oracle,
    traceRatesPerHour: {},
    seed,
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
