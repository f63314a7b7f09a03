/**
 * cuckoo: CUCKOO (deadline-aware interleaved job packing on heterogeneous GPUs) on a fixed cluster, and
 * the two baselines its paper compares with: muri (Muri-like packing on efficiency alone, the most
 * urgent candidates placed in arrival order) and fifo (no packing). See README.md in this folder.
 */
import type { PolicyDefinition } from '../../policy.ts';
import { positiveClusterGpus } from '../common/fixed-cluster.ts';
import { GroupScheduler, type PackerFlavour } from './group-scheduler.ts';

export class CuckooOptionsError extends Error {
  override name = 'CuckooOptionsError';
}
export class MuriOptionsError extends Error {
  override name = 'MuriOptionsError';
}
export class FifoOptionsError extends Error {
  override name = 'FifoOptionsError';
}

function definition(
  name: PackerFlavour,
  describe: string,
  OptionsError: new (message: string) => Error,
): PolicyDefinition {
  return {
    name,
    mode: 'fixed',
    knob: 'budget',
    describe,
    create(context, options) {
      positiveClusterGpus(name, options, OptionsError);
      const scheduler = new GroupScheduler(context, name);
      return { name, decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
    },
  };
}

export const cuckooPolicy = definition(
  'cuckoo',
  'CUCKOO: jobs paired by blossom matching on interleaving efficiency and deadlines, groups planned onto GPU types by min-cost flow (fixed cluster of `budget` GPUs)',
  CuckooOptionsError,
);
export const muriPolicy = definition(
  'muri',
  'Muri-like: jobs paired by blossom matching on interleaving efficiency alone, the most urgent candidates started in arrival order on the first pool with room (fixed cluster)',
  MuriOptionsError,
);
export const fifoPolicy = definition(
  'fifo',
  'FIFO: one job per GPU set at its request, no packing, the most urgent candidates started in arrival order (fixed cluster)',
  FifoOptionsError,
);
