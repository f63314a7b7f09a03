/**
 * One round of CUCKOO (or of the Muri-like packer it is compared with) per tick, on a fixed cluster
 * that may mix GPU types. Jobs run at their requested width (the paper's m_j; capped at the largest
 * pool), never preempted: a running job keeps its GPUs and its partner until one of them finishes (then
 * the other runs on alone). When GPUs are free, the waiting jobs are packed into pairs (packing.ts),
 * split again where weighted free GPUs would idle (anti-overpacking), and the groups are planned onto
 * (GPU type, order) slots (planning.ts); those at order 1 start now, on GPUs of one type.
 *
 * The Muri-like variant is the same pipeline with what CUCKOO adds taken out: packing on efficiency
 * alone (w = 1, no deadline fallback), every GPU weighing 1, and the candidates' groups started in
 * arrival order on the first pool with room (no heterogeneity or deadline in the plan; the candidates
 * are still cut by urgency). FIFO is that without packing: one job at a time on its GPUs (the paper's
 * "None" / no packing).
 */
import type { ClusterView, Decision, GpuType, JobView, NodeView, PolicyContext } from '../../policy.ts';
import { RemainingTime } from '../common/remaining.ts';
import { DEFAULT_INTERFERENCE, type StageProfile } from './interleave.ts';
import {
  EFFICIENCY_WEIGHT,
  estimatePair,
  type PackCandidate,
  packJobs,
  type PairEstimate,
  sharedSeconds,
  unpackToFill,
} from './packing.ts';
import { type PlanGroup, planGroups } from './planning.ts';

export type PackerFlavour = 'cuckoo' | 'muri' | 'fifo';

/** Waiting jobs considered per round, earliest deadline first (the paper prunes its candidates too). */
export const MAX_CANDIDATES = 48;
/** Execution orders a plan looks ahead per lane. */
export const PLAN_ORDERS = 4;

interface Group {
  readonly members: readonly number[];
  readonly width: number;
  readonly earliestArrival: number;
  readonly plan: PlanGroup;
}

export class GroupScheduler {
  readonly #model: RemainingTime;
  readonly #cache = new Map<string, PairEstimate>();
  readonly #types: readonly GpuType[];

  constructor(
    readonly context: PolicyContext,
    readonly flavour: PackerFlavour,
  ) {
    this.#model = new RemainingTime(context.profiles.classes, 'listed');
    this.#types = context.hardware?.types ?? ['t4'];
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const allocations = new Map<number, readonly number[]>();
    const colocate: number[][] = [];
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const ready = cluster.nodes.filter((n) => n.ready);
    const free = new Map(ready.map((n) => [n.id, n.gpus]));
    // Running jobs keep their GPUs and partners; a group's GPUs count once.
    for (const job of jobs) {
      if (job.allocation.length === 0) continue;
      allocations.set(job.id, job.allocation);
      const partner = (job.colocatedWith ?? []).map((id) => byId.get(id)).find((p) => p !== undefined);
      const shared = partner !== undefined && sameAllocation(partner.allocation, job.allocation);
      if (shared && partner.id < job.id) {
        colocate.push([partner.id, job.id]);
        continue;
      }
      for (const node of job.allocation) free.set(node, (free.get(node) ?? 0) - 1);
    }
    const freeByType = this.#types.map((t) =>
      ready.filter((n) => typeOf(n) === t).reduce((s, n) => s + Math.max(0, free.get(n.id) ?? 0), 0),
    );
    const waiting = jobs.filter((j) => j.allocation.length === 0);
    if (waiting.length === 0 || freeByType.every((f) => f === 0)) return { allocations, colocate };
    const poolSize = this.#types.map((t) =>
      ready.filter((n) => typeOf(n) === t).reduce((s, n) => s + n.gpus, 0),
    );
    const largestPool = Math.max(...poolSize);
    const freeTotal = freeByType.reduce((s, f) => s + f, 0);
    const now = cluster.now;
    const widthOf = (job: JobView) => Math.max(1, Math.min(job.requestedGpus, largestPool));
    // The paper puts a group that could only run by violating its deadline back in the queue: jobs
    // that can still make their deadline come first (earliest deadline first), those that cannot
    // after them, first come first served, without a deadline (no lateness term to outbid the rest).
    const views = waiting.map((job) => ({ job, c: this.#candidate(job, widthOf(job), now) }));
    const feasible = (c: PackCandidate) => Math.min(...c.secondsAlone) <= c.deadlineIn;
    views.sort((a, b) => {
      const fa = feasible(a.c);
      const fb = feasible(b.c);
      if (fa !== fb) return fa ? -1 : 1;
      if (fa) return a.c.deadlineIn - b.c.deadlineIn || a.job.arrival - b.job.arrival || a.job.id - b.job.id;
      return a.job.arrival - b.job.arrival || a.job.id - b.job.id;
    });
    const chosen = views.slice(0, Math.min(MAX_CANDIDATES, Math.max(8, 4 * freeTotal)));
    const candidates = chosen.map((v) => v.job);
    const packed = chosen.map((v) =>
      feasible(v.c) ? v.c : { ...v.c, deadlineIn: Number.POSITIVE_INFINITY },
    );
    const groups = this.#group(candidates, packed, freeByType);
    const starts =
      this.flavour === 'cuckoo' ? this.#planCuckoo(groups, freeByType) : this.#planFifo(groups, freeByType);
    for (const [g, type] of starts) {
      const group = groups[g] as Group;
      const allocation = place(ready, free, this.#types[type] as GpuType, group.width);
      if (allocation === null) continue;
      for (const m of group.members) allocations.set((candidates[m] as JobView).id, allocation);
      if (group.members.length > 1) colocate.push(group.members.map((m) => (candidates[m] as JobView).id));
    }
    return { allocations, colocate };
  }

  #candidate(job: JobView, width: number, now: number): PackCandidate {
    const hardware = this.context.hardware;
    const alone = this.#model.seconds(job, width) + this.context.rescaleSeconds;
    const stages: StageProfile[] = this.#types.map((t) => {
      if (hardware === undefined) return { loadMs: 0, forwardMs: 0, backwardMs: 0, commMs: 0 };
      const s = hardware.stages(job.app, t, width);
      return { loadMs: 0, forwardMs: s.forwardMs, backwardMs: s.backwardMs, commMs: s.commMs };
    });
    return {
      width,
      stages,
      secondsAlone: this.#types.map((t) => alone / (hardware?.speedFactor(job.app, t, width) ?? 1)),
      deadlineIn: deadlineOf(job) - now,
      profileKey: `${job.app}@${width}`,
    };
  }

  #group(
    candidates: readonly JobView[],
    packed: readonly PackCandidate[],
    freeByType: readonly number[],
  ): Group[] {
    const cuckoo = this.flavour === 'cuckoo';
    const canPack =
      this.flavour !== 'fifo' && (this.context.maxGroupSize ?? 1) >= 2 && this.context.hardware !== undefined;
    // Section 3.3.2: CUCKOO scores a pair on a type it can start on now, not on a busy faster one.
    // muri keeps the best of every type (measured: the rule makes it weaker, README).
    const freeTypes = cuckoo ? freeByType.flatMap((f, k) => (f > 0 ? [k] : [])) : undefined;
    const options = {
      efficiencyWeight: cuckoo ? EFFICIENCY_WEIGHT : 1,
      deadlineFallback: cuckoo,
      interference: DEFAULT_INTERFERENCE,
      cache: this.#cache,
      freeTypes,
    };
    let pairs = canPack ? packJobs(packed, options) : [];
    pairs = unpackToFill(
      pairs,
      packed,
      freeByType,
      cuckoo ? this.#typeWeights(packed) : freeByType.map(() => 1),
    );
    const paired = new Set(pairs.flatMap((p) => [p.a, p.b]));
    const groups: Group[] = pairs.map((p) => {
      const a = packed[p.a] as PackCandidate;
      const b = packed[p.b] as PackCandidate;
      const est = estimatePair(a, b, DEFAULT_INTERFERENCE, this.#cache, freeTypes);
      // The pair's time on each type: its slower member at that type's shared pace.
      const seconds = this.#types.map((_, k) => Math.max(...sharedSeconds(a, b, { ...est, type: k })));
      return this.#makeGroup([p.a, p.b], candidates, packed, seconds);
    });
    packed.forEach((c, i) => {
      if (!paired.has(i)) groups.push(this.#makeGroup([i], candidates, packed, c.secondsAlone));
    });
    return groups;
  }

  #makeGroup(
    members: number[],
    candidates: readonly JobView[],
    packed: readonly PackCandidate[],
    seconds: readonly number[],
  ): Group {
    const first = packed[members[0] as number] as PackCandidate;
    return {
      members,
      width: first.width,
      earliestArrival: Math.min(...members.map((m) => (candidates[m] as JobView).arrival)),
      plan: {
        width: first.width,
        seconds,
        deadlineIn: Math.min(...members.map((m) => (packed[m] as PackCandidate).deadlineIn)),
      },
    };
  }

  /** Section 3.3.4's GPU weights: each type's speed over the slowest type's, averaged over the jobs. */
  #typeWeights(packed: readonly PackCandidate[]): number[] {
    const mean = this.#types.map((_, k) => packed.reduce((s, c) => s + 1 / (c.secondsAlone[k] as number), 0));
    const slowest = Math.min(...mean);
    return mean.map((m) => (slowest > 0 ? m / slowest : 1));
  }

  /** CUCKOO: the min-cost (GPU type, order) plan; order-1 groups start. */
  #planCuckoo(groups: readonly Group[], freeByType: readonly number[]): [number, number][] {
    // Look ahead PLAN_ORDERS orders: the most urgent groups that could fill them.
    const lanes = freeByType.reduce((s, f) => s + f, 0);
    const urgent = [...groups].sort(
      (a, b) => a.plan.deadlineIn - b.plan.deadlineIn || a.earliestArrival - b.earliestArrival,
    );
    const considered = urgent.slice(0, Math.max(1, PLAN_ORDERS * lanes));
    const plan = planGroups(
      considered.map((g) => g.plan),
      freeByType,
    );
    return plan.flatMap((slot, i) =>
      slot.order === 1 ? [[groups.indexOf(considered[i] as Group), slot.type] as [number, number]] : [],
    );
  }

  /** Muri-like: the candidates' groups in arrival order, each on the first pool with room. */
  #planFifo(groups: readonly Group[], freeByType: readonly number[]): [number, number][] {
    const left = [...freeByType];
    const order = groups
      .map((_, g) => g)
      .sort((a, b) => (groups[a] as Group).earliestArrival - (groups[b] as Group).earliestArrival || a - b);
    const starts: [number, number][] = [];
    for (const g of order) {
      const width = (groups[g] as Group).width;
      const type = left.findIndex((f) => f >= width);
      if (type < 0) continue;
      left[type] = (left[type] as number) - width;
      starts.push([g, type]);
    }
    return starts;
  }
}

export function deadlineOf(job: JobView): number {
  return job.deadline ?? Number.POSITIVE_INFINITY;
}

function typeOf(node: NodeView): GpuType {
  return node.gpuType ?? 't4';
}

function sameAllocation(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

/** `width` free GPUs of one type, from the nodes with the most free first (few nodes); null if short. */
export function place(
  ready: readonly NodeView[],
  free: Map<number, number>,
  type: GpuType,
  width: number,
): number[] | null {
  const nodes = ready
    .filter((n) => typeOf(n) === type && (free.get(n.id) ?? 0) > 0)
    .sort((a, b) => (free.get(b.id) as number) - (free.get(a.id) as number) || a.id - b.id);
  const total = nodes.reduce((s, n) => s + (free.get(n.id) as number), 0);
  if (total < width) return null;
  const allocation: number[] = [];
  for (const n of nodes) {
    const take = Math.min(free.get(n.id) as number, width - allocation.length);
    for (let i = 0; i < take; i++) allocation.push(n.id);
    free.set(n.id, (free.get(n.id) as number) - take);
    if (allocation.length === width) break;
  }
  return allocation.sort((a, b) => a - b);
}
