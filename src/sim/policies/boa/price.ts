/**
 * boa-price: boa's widths at a fixed price instead of a budget, for comparisons at equal information.
 * Each job of a class runs at the widths minimising its JCT + price x GPU-seconds (BOA.md's Lagrangian,
 * per class, so no arrival rate enters), executed as boa executes its plan; nothing holds a budget: the
 * spend is whatever the load costs at that price. Its knob is a constant, like pollux-autoscale's target
 * efficiency, and a comparison at matched paid spend picks both in hindsight (the value that paid that
 * much on the trace), which no one running a service can do: docs/comparison.md. Not the product: boa
 * holds a budget.
 */
import { DEFAULT_SPEND_CEILING } from '../../../core/spend-ceiling.ts';
import type { PolicyContext, PolicyDefinition, PolicyOptions } from '../../policy.ts';
import { BOA_DEFAULTS, BoaOptionsError } from './index.ts';
import { BoaPolicy } from './policy.ts';
import type { BoaSettings } from './settings.ts';

/**
 * Checks the price; the settings are boa's with every budget mechanism off, except, when a budget is
 * given, the service's spend ceiling at that budget (the 24-hour window held, the price unchanged):
 * what a fixed price costs once it must keep the budget's promise.
 */
export function boaPriceSettings(options: PolicyOptions): BoaSettings {
  const { price, budget } = options;
  if (budget !== undefined && !(Number.isFinite(budget) && budget > 0)) {
    throw new BoaOptionsError(
      `boa-price's budget (optional: the spend ceiling it holds) must be a number > 0, got ${budget}`,
    );
  }
  if (price === undefined || !(Number.isFinite(price) && price > 0)) {
    throw new BoaOptionsError(
      `boa-price needs a price: a number > 0, the seconds of completion time one more GPU-second must save, got ${price}`,
    );
  }
  const solver = options.solver ?? BOA_DEFAULTS.solver;
  if (solver !== 'exact') {
    throw new BoaOptionsError(`boa-price plans with the exact calculator only, got solver "${solver}"`);
  }
  if (options.rates !== undefined) {
    throw new BoaOptionsError(`boa-price reads no arrival rates, got rates "${options.rates}"`);
  }
  return {
    ...BOA_DEFAULTS,
    // No budget control, drain, credit or warm-up runs at a fixed price; the ceiling only with a budget.
    budget: budget ?? 1,
    price,
    ceiling: budget === undefined ? null : DEFAULT_SPEND_CEILING,
    drain: null,
    credit: null,
    warmup: null,
    planCap: null,
  };
}

export const boaPricePolicy: PolicyDefinition = {
  name: 'boa-price',
  mode: 'autoscaled',
  knob: 'price',
  describe:
    "boa's widths at a fixed price per GPU-second (no budget, no rates): the knob is picked in hindsight at matched spend, like pollux-autoscale's target",
  create: (context: PolicyContext, options) => new BoaPolicy(context, boaPriceSettings(options)),
};
