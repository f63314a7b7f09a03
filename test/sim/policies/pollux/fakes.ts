/**
 * Hand-built inputs for the Pollux tests: job and cluster views, and a fake GoodputOracle whose goodput
 * per job is a function of (GPUs, nodes) that each test writes down. Node views come from ../fakes.ts.
 */
import type {
  ClusterView,
  GoodputOracle,
  JobView,
  NodeView,
  PolicyContext,
} from '../../../../src/sim/policy.ts';
import { clusterView as baseClusterView, jobView as baseJobView, policyContext } from '../fakes.ts';

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

/** A "cifar10" job a tenth of the way through, arrived at 0, asking 1 GPU. */
export function jobView(id: number, fields: Partial<JobView> = {}): JobView {
  return baseJobView(id, { app: 'cifar10', progressFraction: 0.1, ...fields });
}

/** These nodes, with maxNodes 100 (room to grow). */
export function clusterView(nodeViews: readonly NodeView[], fields: Partial<ClusterView> = {}): ClusterView {
  return baseClusterView(nodeViews, { maxNodes: 100, ...fields });
}

export function context(oracle: GoodputOracle, seed = 1): PolicyContext {
  return policyContext({ oracle, seed });
}
