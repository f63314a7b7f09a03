/**
 * The Cornucopia baseline (Huang et al.): a three-queue MLFQ on executed time with interactive/batch
 * entry queues, a ramp-up profiler to twice the request, greedy allocation by scaling factor and
 * scaling-aware partial preemption, on a fixed cluster of `budget` GPUs. See README.md in this folder
 * for what is kept from the paper and what is adapted.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { clusterGpusAtLeastOne } from '../common/fixed-cluster.ts';
import { CornucopiaScheduler } from './scheduler.ts';

export class CornucopiaOptionsError extends Error {
  override name = 'CornucopiaOptionsError';
}

export const cornucopiaPolicy: PolicyDefinition = {
  name: 'cornucopia',
  mode: 'fixed',
  knob: 'budget',
  describe:
    'Cornucopia on a fixed cluster of `budget` GPUs: 3-queue MLFQ, ramp-up profiler, greedy by scaling factor, partial preemption',
  create(context, options) {
    clusterGpusAtLeastOne('cornucopia', options, CornucopiaOptionsError);
    const scheduler = new CornucopiaScheduler(context);
    return {
      name: 'cornucopia',
      onArrival: (job) => scheduler.onArrival(job),
      onCompletion: (job) => scheduler.onCompletion(job),
      decide: (cluster, jobs) => scheduler.decide(cluster, jobs),
    };
  },
};
