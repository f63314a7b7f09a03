/**
 * The Pollux baselines (Qiao et al., OSDI'21, as run in its AdaptDL simulator): goodput-driven elastic
 * allocation with a fairness power mean, on a fixed cluster or with Pollux's utility autoscaler.
 * See README.md in this folder for what is kept from the paper and what is adapted.
 */
import type { PolicyDefinition, PolicyOptions } from '../../policy.ts';
import { DEFAULT_TARGET_UTILITY, utilityBand } from './autoscale.ts';
import { DEFAULT_POLLUX_BUDGET, TargetController } from './budget.ts';
import { type PolluxSettings, PolluxScheduler } from './scheduler.ts';

export class PolluxOptionsError extends Error {
  override name = 'PolluxOptionsError';
}

/** The variant options (for `compare --sensitivity`); unset ones take POLLUX_DEFAULTS. */
function variant(options: PolicyOptions): Omit<PolluxSettings, 'band'> {
  const window = options.utilityWindowTicks;
  if (window !== undefined && !(Number.isInteger(window) && window >= 1)) {
    throw new PolluxOptionsError(`pollux utility window must be a whole number of ticks >= 1, got ${window}`);
  }
  return {
    ...(options.explorationCap === undefined ? {} : { explorationCap: options.explorationCap }),
    ...(window === undefined ? {} : { windowTicks: window }),
    ...(options.bootFreeze === undefined ? {} : { bootFreeze: options.bootFreeze }),
    ...(options.interferenceAvoidance === undefined
      ? {}
      : { interferenceAvoidance: options.interferenceAvoidance }),
  };
}

export const polluxFixedPolicy: PolicyDefinition = {
  name: 'pollux-fixed',
  mode: 'fixed',
  knob: 'budget',
  describe: 'Pollux on a fixed cluster of `budget` GPUs: goodput-optimal elastic widths, fairness p = -1',
  create(context, options) {
    const scheduler = new PolluxScheduler(context, { ...variant(options), band: null });
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
      ...variant(options),
      band: utilityBand(options.target ?? DEFAULT_TARGET_UTILITY),
    });
    return { name: 'pollux-autoscale', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};

export const polluxBudgetPolicy: PolicyDefinition = {
  name: 'pollux-budget',
  mode: 'autoscaled',
  knob: 'budget',
  describe:
    'pollux-autoscale holding a time-average budget: a feedback controller moves its efficiency target c',
  create(context, options) {
    const { budget } = options;
    if (budget === undefined || !(Number.isFinite(budget) && budget > 0)) {
      throw new PolluxOptionsError(
        `pollux-budget needs a budget: a positive number of paid GPU-hours per hour, got ${budget}`,
      );
    }
    const gain = options.polluxBudgetGainPerHour;
    if (gain !== undefined && !(Number.isFinite(gain) && gain > 0)) {
      throw new PolluxOptionsError(`pollux-budget's gain must be a positive number per hour, got ${gain}`);
    }
    const controller = new TargetController(budget, {
      ...DEFAULT_POLLUX_BUDGET,
      ...(gain === undefined ? {} : { gainPerHour: gain }),
    });
    const scheduler = new PolluxScheduler(context, {
      ...variant(options),
      band: utilityBand(controller.target),
    });
    return {
      name: 'pollux-budget',
      decide(cluster, jobs) {
        scheduler.band = utilityBand(controller.update(cluster));
        return scheduler.decide(cluster, jobs);
      },
    };
  },
};
