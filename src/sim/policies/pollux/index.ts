/**
 * The Pollux baselines (Qiao et al., OSDI'21, as run in its AdaptDL simulator): goodput-driven elastic
 * allocation with a fairness power mean, on a fixed cluster or with Pollux's utility autoscaler.
 * See README.md in this folder for what is kept from the paper and what is adapted.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { DEFAULT_TARGET_UTILITY, utilityBand } from './autoscale.ts';
import { PolluxScheduler } from './scheduler.ts';

export const polluxFixedPolicy: PolicyDefinition = {
  name: 'pollux-fixed',
  mode: 'fixed',
  knob: 'budget',
  describe: 'Pollux on a fixed cluster of `budget` GPUs: goodput-optimal elastic widths, fairness p = -1',
  create(context) {
    const scheduler = new PolluxScheduler(context, { band: null });
    return { name: 'pollux-fixed', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};

export const polluxAutoscalePolicy: PolicyDefinition = {
  name: 'pollux-autoscale',
  mode: 'autoscaled',
  knob: 'target',
  describe:
    'Pollux with its autoscaler: grows/shrinks whole nodes to hold cluster utility near `target` (default 0.5)',
  create(context, options) {
    const scheduler = new PolluxScheduler(context, {
      band: utilityBand(options.target ?? DEFAULT_TARGET_UTILITY),
    });
    return { name: 'pollux-autoscale', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
