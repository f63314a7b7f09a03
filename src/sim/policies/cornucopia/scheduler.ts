/**
 * One Cornucopia round, every tick, on the ready nodes of a fixed cluster: move jobs between the MLFQ's
 * queues (queues.ts), profile jobs starting for the first time (profiler.ts, Algorithm 1), deal free GPUs
 * and preempt for jobs short of their request (allocate.ts, Algorithms 2 and 3), then place the widths
 * with the shared executor (a job that keeps its width stays where it is; the others are re-placed,
 * shrinking first, then waiting jobs best fit in priority order). On a cluster of several GPU types
 * each type is a pool of its own and every job runs within one (pools.ts). Reads the class profiles and
 * what jobs report; never the oracle. No randomness: the same views give the same decision.
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { ClassProfile } from '../../../core/profile.ts';
import type { Allocation, ClusterView, Decision, JobKind, JobView, PolicyContext } from '../../policy.ts';
import { RemainingTime } from '../common/remaining.ts';
import { allocateWidths, type Contender } from './allocate.ts';
import { jobKind } from './kind.ts';
import { assignPools, type GpuPool, gpuPools } from './pools.ts';
import { rampUpProfile, type RampUpProfile } from './profiler.ts';
import { Mlfq, type MlfqSettings, type QueueLevel } from './queues.ts';

export class CornucopiaProfileError extends Error {
  override name = 'CornucopiaProfileError';
}

export type CornucopiaSettings = MlfqSettings;

export class CornucopiaScheduler {
  readonly mlfq: Mlfq;
  readonly #classes = new Map<string, ClassProfile>();
  readonly #remaining: RemainingTime;
  readonly #profiles = new Map<number, RampUpProfile>();
  readonly #seen = new Set<number>();

  constructor(
    readonly context: PolicyContext,
    settings: CornucopiaSettings = {},
  ) {
    this.mlfq = new Mlfq(settings);
    for (const cls of context.profiles.classes) this.#classes.set(cls.name, cls);
    this.#remaining = new RemainingTime(context.profiles.classes);
  }

  onArrival(job: JobView): void {
    if (this.#seen.has(job.id)) return;
    this.#seen.add(job.id);
    this.mlfq.onArrival(this.kind(job), this.#estimate(job));
  }

  onCompletion(job: JobView): void {
    this.mlfq.onCompletion(job.id, this.kind(job), job.runSeconds);
    this.#profiles.delete(job.id);
    this.#seen.delete(job.id);
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    for (const job of jobs) this.onArrival(job);
    const levels = this.mlfq.update(
      jobs.map((j) => ({
        id: j.id,
        kind: this.kind(j),
        runSeconds: j.runSeconds,
        holding: j.allocation.length,
      })),
      cluster.now,
    );
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const ordered = jobs
      .map((job) => ({ job, queue: levels.get(job.id) ?? 2 }))
      .sort((a, b) => a.queue - b.queue || a.job.arrival - b.job.arrival || a.job.id - b.job.id);
    const pools = gpuPools(ready);
    const poolOf = assignPools(
      ordered.map(({ job, queue }) => ({
        queue,
        request: Math.max(1, job.requestedGpus),
        allocation: job.allocation,
      })),
      pools,
    );
    const allocations = new Map<number, Allocation>();
    pools.forEach((pool, p) => {
      const members = ordered.filter((_, i) => poolOf[i] === p);
      for (const [id, allocation] of this.#decidePool(pool, members, cluster.gpusPerNode)) {
        allocations.set(id, allocation);
      }
    });
    return { allocations };
  }

  /** Algorithms 2 and 3 and placement within one GPU type's pool (the whole cluster when homogeneous). */
  #decidePool(
    pool: GpuPool,
    members: readonly { readonly job: JobView; readonly queue: QueueLevel }[],
    gpusPerNode: number,
  ): Map<number, Allocation> {
    const contenders: Contender[] = members.map(({ job, queue }) => ({
      id: job.id,
      queue,
      request: Math.min(Math.max(1, job.requestedGpus), pool.gpus),
      profile: this.#profile(job),
      current: job.allocation.length,
    }));
    const widths = allocateWidths(contenders, pool.gpus);
    const out = executeWidths(
      members
        .filter(({ job }) => widths.has(job.id))
        .map(({ job }) => ({ id: job.id, width: widths.get(job.id) as number, current: job.allocation })),
      pool.nodes,
      { gpusPerNode, maxNodes: Math.max(pool.nodes.length, 1), shortfall: 'partial' },
    );
    return out.allocations;
  }

  kind(job: JobView): JobKind {
    this.#class(job.app);
    return jobKind(job, this.#remaining);
  }

  /** The whole job's run time at its request, by its class profile. */
  #estimate(job: JobView): number {
    this.#class(job.app);
    return this.#remaining.wholeSeconds(job.app, job.requestedGpus);
  }

  /** Algorithm 1, once per job: the epoch it is in when first scheduled, up to twice its request. */
  #profile(job: JobView): RampUpProfile {
    let profile = this.#profiles.get(job.id);
    if (profile === undefined) {
      const epochs = this.#class(job.app).epochs;
      const epoch = epochs[Math.min(Math.max(0, job.statEpoch), epochs.length - 1)];
      profile = rampUpProfile(epoch as (typeof epochs)[number], job.requestedGpus);
      this.#profiles.set(job.id, profile);
    }
    return profile;
  }

  #class(app: string): ClassProfile {
    const cls = this.#classes.get(app);
    if (cls === undefined) {
      const known = [...this.#classes.keys()].join(', ');
      throw new CornucopiaProfileError(`no profile for application "${app}"; the profiles have: ${known}`);
    }
    return cls;
  }
}
