import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { replicaKey } from '../../src/service/stopping-replicas.ts';

/**
 * An executor whose replicas run until boa no longer wants them, then stop for their whole grace unless
 * the test ends them (end): as a replica that ignores SIGTERM, or checkpoints slowly, does. While
 * `failing`, it acts on what it is sent (starts and stops replicas) but its answer fails, as a status
 * list that times out after the creates went through.
 */
export class GraceExecutor implements Executor {
  readonly kind = 'local' as const;
  failing = false;
  private readonly replicas = new Map<string, ReplicaStatus>();
  private readonly ending = new Set<number>();

  constructor(
    public now: () => number,
    private readonly graceMs = 120_000,
  ) {}

  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    const wanted = new Set<string>();
    for (const job of desired)
      for (const spec of job.replicas) {
        const key = replicaKey(spec);
        wanted.add(key);
        if (!this.replicas.has(key))
          this.replicas.set(key, { ...spec, phase: 'running', node: spec.node } as ReplicaStatus);
      }
    for (const [key, r] of this.replicas) {
      if (wanted.has(key)) continue;
      if (this.ending.has(r.jobId)) this.replicas.delete(key);
      else if (r.phase !== 'stopping')
        this.replicas.set(key, { ...r, phase: 'stopping', killAt: this.now() + this.graceMs });
    }
    if (this.failing) throw new Error('status list timed out');
    return [...this.replicas.values()].map(({ jobId, generation, rank, node, phase, killAt }) => ({
      jobId,
      generation,
      rank,
      node,
      phase,
      ...(killAt === undefined ? {} : { killAt }),
    }));
  }

  /** The job's stopping replicas end (at the next reconcile). */
  end(jobId: number): void {
    this.ending.add(jobId);
  }

  /** Nodes of the job's replicas not ended (running or stopping), one per replica. */
  nodesOf(jobId: number): string[] {
    return [...this.replicas.values()].filter((r) => r.jobId === jobId).map((r) => r.node);
  }

  async close(): Promise<void> {}
}
