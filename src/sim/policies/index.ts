/**
 * The policy registry: every policy the simulator and the comparison can run. To add one: one import
 * line and one entry in POLICIES (kept a plain list so such edits merge trivially).
 */
import type { PolicyDefinition } from '../policy.ts';
import { boaPolicy } from './boa/index.ts';
import { boaPricePolicy } from './boa/price.ts';
import { cornucopiaPolicy } from './cornucopia/index.ts';
import { srtfPolicy, srtfPriorityPolicy } from './cornucopia/srtf.ts';
import { cuckooPolicy, fifoPolicy, muriPolicy } from './cuckoo/index.ts';
import { fixedRequestPolicy } from './fixed-request/index.ts';
import { lyraPolicy } from './lyra/index.ts';
import { onesPolicy } from './ones/index.ts';
import { polluxAutoscalePolicy, polluxBudgetPolicy, polluxFixedPolicy } from './pollux/index.ts';

// One entry per line, so concurrent additions touch different lines.
// prettier-ignore
export const POLICIES: readonly PolicyDefinition[] = [
  boaPolicy,
  fixedRequestPolicy,
  polluxFixedPolicy,
  polluxAutoscalePolicy,
  polluxBudgetPolicy,
  lyraPolicy,
  onesPolicy,
  cuckooPolicy,
  muriPolicy,
  fifoPolicy,
  cornucopiaPolicy,
  srtfPolicy,
  srtfPriorityPolicy,
  boaPricePolicy,
];

export class UnknownPolicyError extends Error {
  override name = 'UnknownPolicyError';
}

/** The registered policy of that name; the error lists the allowed names. */
export function findPolicy(name: string): PolicyDefinition {
  const found = POLICIES.find((p) => p.name === name);
  if (found === undefined) {
    throw new UnknownPolicyError(
      `unknown policy "${name}"; allowed: ${POLICIES.map((p) => p.name).join(', ')}`,
    );
  }
  return found;
}
