/**
 * Hand-checkable inputs for the ONES and cuckoo tests: a two-class profile whose times are easy to
 * work out, and a cluster of `count` nodes. Job and node views come from ../fakes.ts (its jobs are of
 * class "lin").
 */
import type { ProfileFile } from '../../../../src/core/profile.ts';
import type { ClusterView, PolicyContext } from '../../../../src/sim/policy.ts';
import { clusterView as baseClusterView, nodes, policyContext } from '../fakes.ts';

/**
 * `lin`: 2 epochs of 100 and 200 s on 1 GPU, perfectly linear up to 8 GPUs (its peak).
 * `dip`: 1 epoch of 400 s; speedup 2 at 2 GPUs, 2 at 4 (no gain), 4 at 8.
 */
export const PROFILES: ProfileFile = {
  version: 1,
  instanceType: 'test',
  gpusPerNode: 4,
  classes: [
    {
      name: 'lin',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [
        { workSeconds: 100, speedup: { 1: 1, 2: 2, 4: 4, 8: 8 } },
        { workSeconds: 200, speedup: { 1: 1, 2: 2, 4: 4, 8: 8 } },
      ],
    },
    {
      name: 'dip',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [{ workSeconds: 400, speedup: { 1: 1, 2: 2, 4: 2, 8: 4 } }],
    },
  ],
};

export function clusterView(count: number, fields: Partial<ClusterView> = {}): ClusterView {
  return baseClusterView(nodes(count), fields);
}

export function context(seed = 1): PolicyContext {
  return policyContext({ profiles: PROFILES, seed });
}
