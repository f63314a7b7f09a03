/**
 * Hand-built inputs for the Lyra tests: a small profile whose times are easy to compute by hand. Job,
 * node and cluster views come from ../fakes.ts (its jobs are of class "lin").
 */
import type { ClassProfile } from '../../../../src/core/profile.ts';
import type { PolicyContext } from '../../../../src/sim/policy.ts';
import { policyContext, profileFile } from '../fakes.ts';

/**
 * "lin": two epochs of 1200 s of 1-GPU work each, linear speedup at 1, 2, 4 and 8 GPUs.
 * "flat": one epoch of 600 s that no second GPU speeds up (1, 2 and 4 listed).
 */
export const CLASSES: ClassProfile[] = [
  {
    name: 'lin',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [
      { workSeconds: 1200, speedup: { '1': 1, '2': 2, '4': 4, '8': 8 } },
      { workSeconds: 1200, speedup: { '1': 1, '2': 2, '4': 4, '8': 8 } },
    ],
  },
  {
    name: 'flat',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [{ workSeconds: 600, speedup: { '1': 1, '2': 1, '4': 1 } }],
  },
];

export function context(classes: ClassProfile[] = CLASSES): PolicyContext {
  return policyContext({ profiles: profileFile(classes) });
}
