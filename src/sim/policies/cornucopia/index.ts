/**
 * The Cornucopia baseline: a three-queue MLFQ on attained GPU service with interactive/batch entry
 * queues, acceleration-ratio greedy widths (higher queues first) and partial preemption (lower-queue
 * jobs shrink before they stop), on a fixed cluster of `budget` GPUs. See README.md in this folder for
 * what is assumed and what is adapted.
 */
import type { PolicyDefinition, PolicyOptions } from '../../policy.ts';
import { CornucopiaScheduler } from './scheduler.ts';

export class CornucopiaOptionsError extends Error {
  override name = 'CornucopiaOptionsError';
}

/** The budget is the cluster's size in GPUs (the engine rents ceil(budget / 4) nodes; all are used). */
export function checkBudget(options: PolicyOptions): void {
  const budget = options.budget;
  if (budget === undefined || !(Number.isFinite(budget) && budget >= 1)) {
    throw new CornucopiaOptionsError(
      `cornucopia runs on a fixed cluster: give its size as --budget, a number of GPUs >= 1, got ${budget}`,
    );
  }
}

export const cornucopiaPolicy: PolicyDefinition = {
  name: 'cornucopia',
  mode: 'fixed',
  knob: 'budget',
  describe:
    'Cornucopia on a fixed cluster of `budget` GPUs: 3-queue MLFQ on attained GPU time, acceleration-ratio greedy widths, partial preemption',
  create(context, options) {
    checkBudget(options);
    const scheduler = new CornucopiaScheduler(context);
    return { name: 'cornucopia', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
