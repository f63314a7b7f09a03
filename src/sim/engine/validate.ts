/**
 * The invariants every policy's decision must keep; a breach is a bug in the policy, reported with the
 * policy, the tick and the job so it can be found.
 */
import type { Allocation, Decision, NodeView } from '../policy.ts';

export class PolicyViolationError extends Error {
  override name = 'PolicyViolationError';
}

export interface DecisionContext {
  readonly policy: string;
  readonly tick: number;
  readonly now: number;
  readonly mode: 'fixed' | 'autoscaled';
  readonly maxNodes: number;
  /** Active jobs by id, with their names for messages. */
  readonly activeNames: ReadonlyMap<number, string>;
  readonly nodes: readonly NodeView[];
  /** The largest co-location group allowed (1: none). */
  readonly maxGroupSize?: number;
}

export interface ValidDecision {
  /** Allocations normalised (node ids ascending). */
  readonly allocations: Map<number, Allocation>;
  /** Co-location groups of 2 or more jobs with identical allocations, each job in at most one. */
  readonly groups: readonly (readonly number[])[];
}

/** Checks a decision and returns its allocations normalised (node ids ascending); throws on a breach. */
export function validateDecision(decision: Decision, ctx: DecisionContext): Map<number, Allocation> {
  return validateDecisionWithGroups(decision, ctx).allocations;
}

/** As validateDecision, with the co-location groups checked and returned. */
export function validateDecisionWithGroups(decision: Decision, ctx: DecisionContext): ValidDecision {
  const fail = (what: string): never => {
    throw new PolicyViolationError(`policy "${ctx.policy}" at tick ${ctx.tick} (t = ${ctx.now} s): ${what}`);
  };
  if (!(decision?.allocations instanceof Map)) fail('the decision has no allocations map');
  const nodes = new Map(ctx.nodes.map((n) => [n.id, n]));
  const used = new Map<number, number[]>();
  const out = new Map<number, Allocation>();
  for (const [jobId, allocation] of decision.allocations) {
    const name = ctx.activeNames.get(jobId);
    if (name === undefined) fail(`allocation for job ${jobId}, which is not active (arrived and unfinished)`);
    const job = `job ${jobId} (${name})`;
    if (!Array.isArray(allocation)) fail(`${job}: an allocation must be an array of node ids`);
    for (const nodeId of allocation) {
      const node = nodes.get(nodeId);
      if (node === undefined) fail(`${job} is allocated on node ${nodeId}, which the cluster does not have`);
      else if (!node.ready)
        fail(`${job} is allocated on node ${nodeId}, still booting (ready at ${node.readyAt} s)`);
      const holders = used.get(nodeId) ?? [];
      holders.push(jobId);
      used.set(nodeId, holders);
    }
    out.set(
      jobId,
      [...allocation].sort((a, b) => a - b),
    );
  }
  const groups = validateGroups(decision.colocate, out, ctx, fail);
  // A group's GPUs count once: only its first member's allocation is counted.
  for (const group of groups) {
    for (const jobId of group.slice(1)) {
      for (const nodeId of out.get(jobId) as Allocation) {
        const holders = used.get(nodeId) as number[];
        holders.splice(holders.indexOf(jobId), 1);
      }
    }
  }
  for (const [nodeId, holders] of used) {
    const gpus = (nodes.get(nodeId) as NodeView).gpus;
    if (holders.length > gpus) {
      const jobs = [...new Set(holders)].map((id) => `${id} (${ctx.activeNames.get(id)})`).join(', ');
      fail(`node ${nodeId} has ${gpus} GPUs but ${holders.length} are allocated, to job(s) ${jobs}`);
    }
  }
  const desired = decision.desiredNodes;
  if (ctx.mode === 'autoscaled' && desired !== undefined) {
    if (!Number.isInteger(desired) || desired < 0)
      fail(`desiredNodes must be an integer >= 0, got ${desired}`);
    if (desired > ctx.maxNodes)
      fail(`desiredNodes ${desired} is above the cluster's maximum of ${ctx.maxNodes} nodes`);
  }
  return { allocations: out, groups };
}

function validateGroups(
  colocate: Decision['colocate'],
  allocations: ReadonlyMap<number, Allocation>,
  ctx: DecisionContext,
  fail: (what: string) => never,
): number[][] {
  if (colocate === undefined) return [];
  if (!Array.isArray(colocate)) fail('colocate must be an array of job-id groups');
  const max = ctx.maxGroupSize ?? 1;
  if (colocate.length > 0 && max < 2) fail('this run allows no co-location (maxGroupSize 1)');
  const grouped = new Set<number>();
  return colocate.map((group, g) => {
    if (!Array.isArray(group) || group.length < 2 || group.length > max) {
      fail(`colocate group ${g} must list 2 to ${max} job ids, got ${JSON.stringify(group)}`);
    }
    const first = allocations.get(group[0] as number);
    for (const jobId of group) {
      const name = ctx.activeNames.get(jobId);
      if (name === undefined) fail(`colocate group ${g}: job ${jobId} is not active`);
      if (grouped.has(jobId)) fail(`job ${jobId} (${name}) is in more than one colocate group`);
      grouped.add(jobId);
      const allocation = allocations.get(jobId);
      if (allocation === undefined || allocation.length === 0) {
        fail(`colocate group ${g}: job ${jobId} (${name}) has no GPUs; co-located jobs share an allocation`);
      }
      if (!sameNodes(allocation, first as Allocation)) {
        fail(`colocate group ${g}: job ${jobId} (${name}) is not on the same GPUs as job ${group[0]}`);
      }
    }
    return [...group];
  });
}

function sameNodes(a: Allocation, b: Allocation): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
