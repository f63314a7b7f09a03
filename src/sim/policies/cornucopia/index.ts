/**
 * The Cornucopia baseline: a three-queue MLFQ on attained GPU service with interactive/batch entry
 * queues, acceleration-ratio greedy widths (higher queues first) and partial preemption (lower-queue
 * jobs shrink before they stop), on a fixed cluster of `budget` GPUs. See README.md in this folder for
 * what is assumed and what is adapted.
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
    'Cornucopia on a fixed cluster of `budget` GPUs: 3-queue MLFQ on attained GPU time, acceleration-ratio greedy widths, partial preemption',
  create(context, options) {
    clusterGpusAtLeastOne('cornucopia', options, CornucopiaOptionsError);
    const scheduler = new CornucopiaScheduler(context);
    return { name: 'cornucopia', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
