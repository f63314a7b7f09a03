/**
 * ONES (Bian et al., "ONES: Online Evolutionary Batch Size Orchestration for Scheduling Deep Learning
 * Workloads in GPU Clusters", SC'21) on a fixed cluster of `budget` GPUs: an evolutionary search over
 * allocations carried across ticks, scored by SRUF, with ONES's doubling/halving limits on each job's
 * width. See README.md in this folder for what is kept from the paper and what is adapted.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { positiveClusterGpus } from '../common/fixed-cluster.ts';
import { OnesScheduler } from './scheduler.ts';

export class OnesOptionsError extends Error {
  override name = 'OnesOptionsError';
}

export const onesPolicy: PolicyDefinition = {
  name: 'ones',
  mode: 'fixed',
  knob: 'budget',
  describe: 'ONES on a fixed cluster of `budget` GPUs: evolutionary search, SRUF, doubling/halving widths',
  create(context, options) {
    positiveClusterGpus('ones', options, OnesOptionsError);
    const scheduler = new OnesScheduler(context);
    return { name: 'ones', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
