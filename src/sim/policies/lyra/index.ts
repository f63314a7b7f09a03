/**
 * The Lyra baseline (Li et al., "Lyra: Elastic Scheduling for Deep Learning Clusters", EuroSys'23), its
 * elastic-scheduling part without inference loaning: on a fixed cluster of `budget` GPUs, base demands
 * by shortest job first, spare GPUs as extra workers by a knapsack over JCT reductions, best-fit
 * decreasing placement. See README.md in this folder for what is kept and what is adapted.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { clusterGpusAtLeastOne } from '../common/fixed-cluster.ts';
import { LyraScheduler } from './scheduler.ts';

export class LyraOptionsError extends Error {
  override name = 'LyraOptionsError';
}

export const lyraPolicy: PolicyDefinition = {
  name: 'lyra',
  mode: 'fixed',
  knob: 'budget',
  describe:
    'Lyra on a fixed cluster of `budget` GPUs: base demands shortest-job-first, spare GPUs by a JCT knapsack, best-fit placement',
  create(context, options) {
    clusterGpusAtLeastOne('lyra', options, LyraOptionsError);
    const scheduler = new LyraScheduler(context);
    return { name: 'lyra', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
