/**
 * Cornucopia on a cluster of several GPU types (its section 3.1 (iii)): each job runs on GPUs of one
 * type, and its elastic scaling and preemption stay within that type. The paper's users name the type
 * when they submit; our traces do not, so a running job keeps the type it runs on, and a waiting job is
 * put, each round, in the pool whose free GPUs (those not yet asked for by earlier waiting jobs) cover
 * most of its request; among equals, the one where it could get the most, counting the GPUs of lower
 * queues (Algorithm 3 may take them). A homogeneous cluster is one pool holding every job.
 */
import type { Allocation, GpuType, NodeView } from '../../policy.ts';
import type { QueueLevel } from './queues.ts';

export interface GpuPool {
  readonly type: GpuType;
  /** Its ready nodes. */
  readonly nodes: readonly NodeView[];
  readonly gpus: number;
}

export interface PoolMember {
  readonly queue: QueueLevel;
  readonly request: number;
  readonly allocation: Allocation;
}

/** The ready nodes by GPU type, in the order the types first appear. */
export function gpuPools(ready: readonly NodeView[]): GpuPool[] {
  const byType = new Map<GpuType, NodeView[]>();
  for (const node of ready) {
    const type = typeOf(node);
    const nodes = byType.get(type) ?? [];
    nodes.push(node);
    byType.set(type, nodes);
  }
  return [...byType].map(([type, nodes]) => ({
    type,
    nodes,
    gpus: nodes.reduce((sum, n) => sum + n.gpus, 0),
  }));
}

/** The pool index of each member (`members` in priority order); ties go to the earlier pool. */
export function assignPools(members: readonly PoolMember[], pools: readonly GpuPool[]): number[] {
  const poolOfNode = new Map<number, number>();
  pools.forEach((pool, p) => pool.nodes.forEach((n) => poolOfNode.set(n.id, p)));
  const home = members.map((m) =>
    m.allocation.length > 0 ? poolOfNode.get(m.allocation[0] as number) : undefined,
  );
  // GPUs held per pool and queue (index 1..3), then what each pool has left unasked for.
  const held = pools.map(() => [0, 0, 0, 0]);
  members.forEach((m, i) => {
    const p = home[i];
    if (p === undefined) return;
    const queues = held[p] as number[];
    queues[m.queue] = (queues[m.queue] as number) + m.allocation.length;
  });
  const unasked = pools.map((pool, p) => pool.gpus - (held[p] as number[]).reduce((a, b) => a + b, 0));
  return members.map((m, i) => {
    const p = home[i];
    if (p !== undefined) return p;
    // Free GPUs first (Algorithm 3 takes idle GPUs before revoking any), then all it could get.
    let best = 0;
    let bestKey: [number, number] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
    pools.forEach((_, q) => {
      const free = unasked[q] as number;
      const below = (held[q] as number[]).slice(m.queue + 1).reduce((a, b) => a + b, 0);
      const key: [number, number] = [Math.min(Math.max(free, 0), m.request), free + below];
      if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
        best = q;
        bestKey = key;
      }
    });
    unasked[best] = (unasked[best] as number) - m.request;
    return best;
  });
}

function typeOf(node: NodeView): GpuType {
  return node.gpuType ?? 't4';
}
