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
}

/** Checks a decision and returns its allocations normalised (node ids ascending); throws on a breach. */
export function validateDecision(decision: Decision, ctx: DecisionContext): Map<number, Allocation> {
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
  return out;
}
