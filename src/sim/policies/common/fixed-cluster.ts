/**
 * The size of a fixed cluster from a policy's options: `budget` GPUs (the engine rents
 * ceil(budget / 4) nodes of 4). Each policy passes its own options error class, so errors keep its
 * name. Two rules are in use and kept apart, because merging them would change which budgets are
 * accepted and what the error says: lyra and cornucopia want at least 1 GPU, ones and cuckoo any
 * positive number (as the engine's own check does).
 */
import type { PolicyOptions } from '../../policy.ts';

export type OptionsErrorClass = new (message: string) => Error;

/** The budget as a cluster of at least 1 GPU (lyra, cornucopia). */
export function clusterGpusAtLeastOne(
  policy: string,
  options: PolicyOptions,
  OptionsError: OptionsErrorClass,
): number {
  const budget = options.budget;
  if (budget === undefined || !(Number.isFinite(budget) && budget >= 1)) {
    throw new OptionsError(
      `${policy} runs on a fixed cluster: give its size as --budget, a number of GPUs >= 1, got ${budget}`,
    );
  }
  return budget;
}

/** The budget as a cluster of any positive number of GPUs (ones, cuckoo). */
export function positiveClusterGpus(
  policy: string,
  options: PolicyOptions,
  OptionsError: OptionsErrorClass,
): number {
  const budget = options.budget;
  if (budget === undefined || !(Number.isFinite(budget) && budget > 0)) {
    throw new OptionsError(
      `${policy}: runs on a fixed cluster; give its size as --budget, a positive number of GPUs ` +
        `(ceil(budget / 4) nodes of 4), got ${budget === undefined ? 'none' : budget}`,
    );
  }
  return budget;
}
