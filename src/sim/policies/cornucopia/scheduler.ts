/**
 * One Cornucopia round, every tick, on the ready nodes of a fixed cluster: queue every job (queues.ts),
 * allocate widths by queue and acceleration ratio (allocate.ts), then place them with the shared
 * executor (a job that keeps its width stays where it is; the others are re-placed shrinking first,
 * then waiting jobs best fit in priority order). Speedups come from the class profiles.
 * No randomness: the same views give the same decision.
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { ClusterView, Decision, JobView, PolicyContext } from '../../policy.ts';
import { AccelerationTable } from './acceleration.ts';
import { allocateWidths, type Candidate } from './allocate.ts';
import { type JobLabel, labelOf, queueOf } from './queues.ts';

export interface CornucopiaSettings {
  /** Attained GPU-seconds at which jobs move to Q1 and Q2 (default QUEUE_THRESHOLDS). */
  readonly thresholds?: readonly [number, number];
  /** Least per-GPU acceleration ratio for priority growth (default PRIORITY_RATIO). */
  readonly priorityRatio?: number;
}

export class CornucopiaScheduler {
  readonly #acceleration: AccelerationTable;
  readonly #labels = new Map<string, JobLabel>();

  constructor(
    readonly context: PolicyContext,
    readonly settings: CornucopiaSettings = {},
  ) {
    this.#acceleration = new AccelerationTable(context.profiles.classes);
    for (const cls of context.profiles.classes) this.#labels.set(cls.name, labelOf(cls));
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const queued = jobs.map((job) => ({ job, candidate: this.candidate(job) }));
    queued.sort(
      (a, b) => a.candidate.queue - b.candidate.queue || a.job.arrival - b.job.arrival || a.job.id - b.job.id,
    );
    const widths = allocateWidths(
      queued.map((q) => q.candidate),
      gpus,
      this.settings.priorityRatio,
    );
    const out = executeWidths(
      queued
        .filter((q) => widths.has(q.job.id))
        .map((q) => ({ id: q.job.id, width: widths.get(q.job.id) as number, current: q.job.allocation })),
      ready,
      { gpusPerNode: cluster.gpusPerNode, maxNodes: Math.max(ready.length, 1), shortfall: 'partial' },
    );
    return { allocations: out.allocations };
  }

  candidate(job: JobView): Candidate {
    const label = this.#labels.get(job.app) ?? 'batch';
    return {
      id: job.id,
      queue: queueOf(label, job.attainedGpuSeconds, this.settings.thresholds),
      vertices: this.#acceleration.vertices(job.app, job.statEpoch),
      current: job.allocation.length,
    };
  }
}
