/**
 * cuckoo: a deadline-aware baseline on a fixed cluster of `budget` GPUs. Every job gets a deadline of
 * arrival + f x its fastest execution time (f ~ N(8, 2) per job, seeded); each tick the free GPU slots
 * go to (job, width) by a min-cost assignment whose cost is completion time plus a heavy penalty for
 * lateness, least-slack jobs admitted first, no interleaving. See README.md in this folder.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { positiveClusterGpus } from '../common/fixed-cluster.ts';
import { CuckooScheduler } from './scheduler.ts';

export class CuckooOptionsError extends Error {
  override name = 'CuckooOptionsError';
}

export const cuckooPolicy: PolicyDefinition = {
  name: 'cuckoo',
  mode: 'fixed',
  knob: 'budget',
  describe:
    'deadline-aware min-cost assignment of GPU slots on a fixed cluster of `budget` GPUs, least slack first',
  create(context, options) {
    positiveClusterGpus('cuckoo', options, CuckooOptionsError);
    const scheduler = new CuckooScheduler(context);
    return { name: 'cuckoo', decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
  },
};
