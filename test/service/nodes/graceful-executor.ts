import type { DesiredJob, Executor, ReplicaStatus } from '../../../src/service/ports.ts';

/** An executor whose replicas of jobs no longer wanted keep stopping (grace period) until released. */
export function gracefulExecutor() {
  const known = new Map<string, ReplicaStatus>();
  const released = new Set<string>();
  const executor: Executor = {
    kind: 'kubernetes',
    async reconcile(desired: readonly DesiredJob[]) {
      const wanted = new Set<string>();
      for (const job of desired) {
        for (const r of job.replicas) {
          const key = `${r.jobId}/${r.generation}/${r.rank}`;
          wanted.add(key);
          known.set(key, {
            jobId: r.jobId,
            generation: r.generation,
            rank: r.rank,
            node: r.node,
            phase: 'running',
          });
        }
      }
      for (const [key, status] of known) {
        if (wanted.has(key)) continue;
        if (released.has(key)) known.delete(key);
        else known.set(key, { ...status, phase: 'stopping' });
      }
      return [...known.values()];
    },
    async close() {},
  };
  return { executor, releaseAll: () => known.forEach((_, key) => released.add(key)) };
}
