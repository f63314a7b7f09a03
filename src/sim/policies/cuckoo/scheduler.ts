/**
 * One cuckoo round per tick. Admission: running jobs keep at least one GPU (no job is stopped), and
 * waiting jobs are admitted least slack first while GPUs remain (those that can no longer make their
 * deadline last, shortest first). Widths: the min-cost slot assignment
 * (slots.ts) over every admitted job, then a second pass in which a running job keeps its width unless
 * the assignment would at least double or halve it (a change costs a 30 s restart), or it is restarting;
 * the other jobs share what is left. Placement by the shared executor (unchanged jobs stay where they
 * are). No interleaving: a GPU runs one job at a time (the data has no per-stage profiles to pair jobs).
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { ClusterView, Decision, JobView, PolicyContext } from '../../policy.ts';
import { RemainingTime } from '../common/remaining.ts';
import { type JobCost, jobCost } from './cost.ts';
import { deadline, deadlineFactor } from './deadlines.ts';
import { assignSlots, type SlotDemand } from './slots.ts';

export class CuckooScheduler {
  /** Planning model: hull speedups, so costs are convex in width. */
  readonly #model: RemainingTime;
  readonly #fastest = new Map<string, number>();
  readonly #deadlines = new Map<number, number>();

  constructor(readonly context: PolicyContext) {
    this.#model = new RemainingTime(context.profiles.classes, 'hull');
  }

  /** The job's deadline, drawn the first time it is seen. */
  deadlineOf(job: JobView): number {
    let d = this.#deadlines.get(job.id);
    if (d === undefined) {
      d = deadline(job.arrival, this.fastestSeconds(job.app), deadlineFactor(this.context.seed, job.id));
      this.#deadlines.set(job.id, d);
    }
    return d;
  }

  /** The whole job's run time at its best width, from the profile. */
  fastestSeconds(app: string): number {
    let best = this.#fastest.get(app);
    if (best === undefined) {
      best = Number.POSITIVE_INFINITY;
      for (let w = 1; w <= this.#model.widest(app); w++)
        best = Math.min(best, this.#model.wholeSeconds(app, w));
      this.#fastest.set(app, best);
    }
    return best;
  }

  decide(cluster: ClusterView, views: readonly JobView[]): Decision {
    const jobs = [...views].sort((a, b) => a.arrival - b.arrival || a.id - b.id);
    const active = new Set(jobs.map((j) => j.id));
    for (const id of this.#deadlines.keys()) if (!active.has(id)) this.#deadlines.delete(id);
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const now = cluster.now;
    const costs = jobs.map((job) =>
      jobCost(
        job,
        now,
        this.deadlineOf(job),
        // Never below the job's current width, so a kept job's cost covers it.
        Math.max(job.allocation.length, Math.min(gpus, this.#model.widest(job.app))),
        this.#model,
        this.context.rescaleSeconds,
      ),
    );
    const admitted = admit(jobs, costs, gpus);
    const ideal = assignSlots(
      admitted.map((i) => ({ min: 1, cost: (costs[i] as JobCost).cost })),
      gpus,
    );
    const widths = this.#settle(jobs, costs, admitted, ideal, gpus, now);
    const out = executeWidths(
      admitted.flatMap((i, a) => {
        const job = jobs[i] as JobView;
        const width = widths[a] as number;
        return width > 0 ? [{ id: job.id, width, current: job.allocation }] : [];
      }),
      ready,
      { gpusPerNode: cluster.gpusPerNode, maxNodes: cluster.maxNodes, shortfall: 'partial' },
    );
    return { allocations: out.allocations };
  }

  /** The second pass: running jobs near their ideal width keep it; the rest share the remaining GPUs. */
  #settle(
    jobs: readonly JobView[],
    costs: readonly JobCost[],
    admitted: number[],
    ideal: Int32Array,
    gpus: number,
    now: number,
  ): Int32Array {
    const keeps = admitted.map((i, a) => {
      const job = jobs[i] as JobView;
      const current = job.allocation.length;
      if (current === 0) return false;
      if (job.restartingUntil !== null && job.restartingUntil > now) return true;
      const want = ideal[a] as number;
      return want < 2 * current && 2 * want > current;
    });
    // Kept jobs may hold more than their ideal: drop the least urgent waiting jobs until all fit.
    let need = admitted.reduce(
      (sum, i, a) => sum + (keeps[a] ? (jobs[i] as JobView).allocation.length : 1),
      0,
    );
    for (let a = admitted.length - 1; a >= 0 && need > gpus; a--) {
      if ((jobs[admitted[a] as number] as JobView).allocation.length === 0) {
        admitted.splice(a, 1);
        keeps.splice(a, 1);
        need--;
      }
    }
    const demands: SlotDemand[] = admitted.map((i, a) => {
      const cost = (costs[i] as JobCost).cost;
      const current = (jobs[i] as JobView).allocation.length;
      return keeps[a] ? { min: current, cost: cost.subarray(0, current + 1) } : { min: 1, cost };
    });
    return assignSlots(demands, gpus);
  }
}

/**
 * Running jobs, then waiting jobs that can still make their deadline, least slack first, then those
 * that cannot, shortest first; while each can have a GPU, in that order.
 */
export function admit(jobs: readonly JobView[], costs: readonly JobCost[], gpus: number): number[] {
  const running = jobs.flatMap((job, i) => (job.allocation.length > 0 ? [i] : []));
  const waiting = jobs.flatMap((job, i) => (job.allocation.length === 0 ? [i] : []));
  const slack = (i: number) => (costs[i] as JobCost).slack;
  const feasible = waiting.filter((i) => slack(i) >= 0).sort((a, b) => slack(a) - slack(b) || a - b);
  const hopeless = waiting
    .filter((i) => slack(i) < 0)
    .sort((a, b) => (costs[a] as JobCost).fastest - (costs[b] as JobCost).fastest || a - b);
  return [...running, ...feasible, ...hopeless].slice(0, Math.max(gpus, running.length));
}
