/**
 * ONES (Bian et al., "ONES: Online Evolutionary Batch Size Orchestration for Scheduling Deep Learning
 * Workloads in GPU Clusters", SC'21) on a fixed cluster of `budget` GPUs: an evolutionary search over
 * allocations carried across ticks, scored by SRUF, with ONES's doubling/halving limits on each job's
 * width. See README.md in this folder for what is kept from the paper and what is adapted.
 */
import type { PolicyDefinition, PolicyOptions } from '../../policy.ts';
import { OnesScheduler } from './scheduler.ts';

export class OnesOptionsError extends Error {
  override name = 'OnesOptionsError';
}

/** The cluster size in GPUs: a positive number (the engine rents ceil(budget / 4) nodes). */
export function clusterBudget(policy: string, options: PolicyOptions): number {
  const budget = options.budget;
  if (budget === undefined || !(Number.isFinite(budget) && budget > 0)) {
    throw new OnesOptionsError(
      `${policy}: runs on a fixed cluster; give its size as --budget, a positive number of GPUs ` +
        `(ceil(budget / 4) nodes of 4), got ${budget === undefined ? 'none' : budget}`,
    );
  }
  return budget;
}

export const onesPolicy: PolicyDefinition = {
  name: 'ones',
  mode: 'fixed',
  knob: 'budget',
  describe: 'ONES on a fixed cluster of `budget` GPUs: evolutionary search, SRUF, doubling/halving widths',
  create(context, options) {
    clusterBudget('ones', options);
    const scheduler = new OnesScheduler(context);
    return { name: 'ones', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
