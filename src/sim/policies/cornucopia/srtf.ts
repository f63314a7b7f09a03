/**
 * The SRTF baselines of the Cornucopia paper (its section 5.1 and Fig. 1), on a fixed cluster of `budget`
 * GPUs: preemptive shortest-remaining-time-first, not elastic. Every round the jobs are ordered by their
 * remaining run time at their request, and each in turn runs on exactly its request (capped at the
 * cluster) if that many GPUs are still free; a job that does not fit waits and later, smaller jobs may
 * still start (backfill); a running job that falls out of the selection is stopped (preempted whole).
 * `srtf-priority` puts every interactive job ahead of every batch job first (Fig. 1's "SRTF-priority").
 *
 * The paper's SRTF knows every job's duration. Here the remaining time is the class profile's estimate
 * from the job's reported progress (common/remaining.ts), the same knowledge every policy has; the
 * engine's truth follows the profiles closely, so this is near the paper's oracle. Never the oracle.
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { ClusterView, Decision, JobView, PolicyContext, PolicyDefinition } from '../../policy.ts';
import { clusterGpusAtLeastOne } from '../common/fixed-cluster.ts';
import { RemainingTime } from '../common/remaining.ts';
import { jobKind } from './kind.ts';

export class SrtfOptionsError extends Error {
  override name = 'SrtfOptionsError';
}

export class SrtfScheduler {
  readonly #remaining: RemainingTime;

  constructor(
    context: PolicyContext,
    readonly interactiveFirst: boolean,
  ) {
    this.#remaining = new RemainingTime(context.profiles.classes);
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const ranked = jobs.map((job) => {
      const width = Math.min(Math.max(1, job.requestedGpus), gpus);
      const interactive = this.interactiveFirst && jobKind(job, this.#remaining) === 'interactive';
      return { job, width, rank: interactive ? 0 : 1, left: this.#remaining.seconds(job, width) };
    });
    ranked.sort(
      (a, b) => a.rank - b.rank || a.left - b.left || a.job.arrival - b.job.arrival || a.job.id - b.job.id,
    );
    let free = gpus;
    const chosen = ranked.filter((r) => {
      if (r.width > free) return false;
      free -= r.width;
      return true;
    });
    const out = executeWidths(
      chosen.map((r) => ({ id: r.job.id, width: r.width, current: r.job.allocation })),
      ready,
      { gpusPerNode: cluster.gpusPerNode, maxNodes: Math.max(ready.length, 1), shortfall: 'gang' },
    );
    return { allocations: out.allocations };
  }
}

function srtfDefinition(name: string, interactiveFirst: boolean, describe: string): PolicyDefinition {
  return {
    name,
    mode: 'fixed',
    knob: 'budget',
    describe,
    create(context, options) {
      clusterGpusAtLeastOne(name, options, SrtfOptionsError);
      const scheduler = new SrtfScheduler(context, interactiveFirst);
      return { name, decide: (cluster, jobs) => scheduler.decide(cluster, jobs) };
    },
  };
}

export const srtfPolicy = srtfDefinition(
  'srtf',
  false,
  'Preemptive shortest-remaining-time-first on a fixed cluster of `budget` GPUs, each job at its request (Cornucopia paper baseline)',
);

export const srtfPriorityPolicy = srtfDefinition(
  'srtf-priority',
  true,
  'SRTF with every interactive job ahead of every batch job, each at its request, on a fixed cluster of `budget` GPUs',
);
