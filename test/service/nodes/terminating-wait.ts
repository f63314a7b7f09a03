import type { NodePool, PoolNode } from '../../../src/service/ports.ts';
import type { NodesWorld } from '../nodes-harness.ts';

/** Every call of the pool, passed on as is: a wrapper overrides the ones it changes. */
export function passThrough(pool: NodePool): NodePool {
  return {
    kind: pool.kind,
    describe: () => pool.describe(),
    setDesiredSize: (n) => pool.setDesiredSize(n),
    cordon: (ids) => pool.cordon(ids),
    uncordon: (ids) => pool.uncordon(ids),
    protect: (ids, p) => pool.protect(ids, p),
    terminate: (ids) => pool.terminate(ids),
    listNodes: () => pool.listNodes(),
  };
}

/**
 * EKS managed node groups put a termination lifecycle hook on their ASG: after
 * TerminateInstanceInAutoScalingGroup the instance sits in Terminating:Wait (EC2 still `running`, its
 * Node cordoned and drained by EKS) for up to ~5 minutes. The emulator shuts an instance down at once;
 * this wrapper keeps each terminated instance listed for `holdMs` more, as DescribeInstances does. Its
 * memory outlives a restart of boa, as AWS's does.
 */
export function terminatingWait(w: NodesWorld, holdMs: number) {
  const terminateCalls: string[] = [];
  const lastSeen = new Map<string, PoolNode>();
  const terminatedAt = new Map<string, number>();
  const wrap = (pool: NodePool, dieAfterTerminate = false): NodePool => ({
    ...passThrough(pool),
    async listNodes() {
      const nodes = await pool.listNodes();
      for (const n of nodes) lastSeen.set(n.id, n);
      const waiting: PoolNode[] = [];
      for (const [id, at] of terminatedAt) {
        if (w.clock.now() - at >= holdMs || nodes.some((n) => n.id === id)) continue;
        waiting.push({ ...lastSeen.get(id)!, ready: false, cordoned: true, waitingFor: 'cordoned' });
      }
      return [...nodes, ...waiting];
    },
    async terminate(ids) {
      terminateCalls.push(...ids);
      const result = await pool.terminate(ids);
      for (const id of result.terminated) terminatedAt.set(id, w.clock.now());
      if (dieAfterTerminate) throw new Error('kill -9 after the termination, before it was recorded');
      return result;
    },
  });
  return { wrap, terminateCalls };
}
