/**
 * Hand-built inputs for the Cornucopia tests: small profiles with speedups easy to reason about, and
 * jobs of class "short" arriving in the order of their ids. Node and cluster views come from ../fakes.ts.
 */
import type { ClassProfile } from '../../../../src/core/profile.ts';
import type { JobView, PolicyContext } from '../../../../src/sim/policy.ts';
import { jobView as baseJobView, policyContext, profileFile } from '../fakes.ts';

const linear = { '1': 1, '2': 2, '3': 3, '4': 4, '8': 8 };

/**
 * "short": 10 minutes on 1 GPU (interactive), linear speedup to 8 GPUs.
 * "long": two 3-hour epochs (batch); linear in its first epoch, no gain past 2 GPUs in its second.
 * "flat": 1 hour (batch by the 20-minute rule) that no second GPU speeds up.
 */
export const CLASSES: ClassProfile[] = [
  { name: 'short', weight: 1, rescaleSeconds: 30, epochs: [{ workSeconds: 600, speedup: linear }] },
  {
    name: 'long',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [
      { workSeconds: 10_800, speedup: linear },
      { workSeconds: 10_800, speedup: { '1': 1, '2': 2, '4': 2 } },
    ],
  },
  {
    name: 'flat',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [{ workSeconds: 3600, speedup: { '1': 1, '4': 1 } }],
  },
];

export function context(classes: ClassProfile[] = CLASSES): PolicyContext {
  return policyContext({ profiles: profileFile(classes) });
}

/** A fresh "short" job that arrived at second `id`. */
export function jobView(id: number, fields: Partial<JobView> = {}): JobView {
  return baseJobView(id, { app: 'short', arrival: id, ...fields });
}
