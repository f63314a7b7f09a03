import type { ReplicaSpec, ReplicaStatus } from '../../service/ports.ts';

/**
 * Reconciles in a row a replica may fail to start (the launcher gone, no processes left) before it is
 * reported failed: one failure is retried (the launcher restarts), a lasting one is the job's restart
 * to count, so it cannot hold its GPUs forever without running.
 */
export const SPAWN_ATTEMPTS = 3;
/** The exit code reported for a replica that could not be started (as a shell's "cannot execute"). */
export const SPAWN_FAILED_EXIT = 126;
/**
 * How long a start whose answer was lost (the launcher ended with it pending) waits for a supervisor
 * it may have spawned to write its pid record (within milliseconds of starting; seconds on a machine
 * under load) before launching again: started again at once, two copies of the replica ran.
 */
export const LOST_START_WAIT_MS = 5_000;

const keyOf = (r: { jobId: number; generation: number; rank: number }) =>
  `${r.jobId}/${r.generation}/${r.rank}`;

/** Replicas of the current generations whose start failed: how often in a row, and the last error. */
export class SpawnFailures {
  private readonly failures = new Map<
    string,
    { attempts: number; error: string; spec: ReplicaSpec; lostAt?: number }
  >();
  /** Lost starts of replicas no longer desired, until LOST_START_WAIT_MS after their loss (unadopted). */
  private readonly undesiredLost = new Map<string, { spec: ReplicaSpec; lostAt: number }>();

  /** `now`: monotonic milliseconds, the supervisor's start being real time. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Notes a failed start; returns how many in a row this replica has had. `lost`: its answer was lost,
   * so its supervisor may run all the same (awaitingRecord).
   */
  failed(spec: ReplicaSpec, error: string, lost = false): number {
    const attempts = (this.failures.get(keyOf(spec))?.attempts ?? 0) + 1;
    this.undesiredLost.delete(keyOf(spec));
    this.failures.set(keyOf(spec), { attempts, error, spec, ...(lost ? { lostAt: this.now() } : {}) });
    return attempts;
  }

  /** A lost start's supervisor may still write its record: not launched again until LOST_START_WAIT_MS. */
  awaitingRecord(spec: ReplicaSpec): boolean {
    const lostAt = this.failures.get(keyOf(spec))?.lostAt;
    return lostAt !== undefined && this.now() - lostAt < LOST_START_WAIT_MS;
  }

  started(spec: ReplicaSpec): void {
    this.failures.delete(keyOf(spec));
    this.undesiredLost.delete(keyOf(spec));
  }

  /**
   * Lost starts no launch will adopt, whose supervisor may yet write its record: the last attempt of a
   * replica given up on (while its generation is desired), and those of replicas no longer desired
   * (until LOST_START_WAIT_MS after their loss, as long as a desired one waits). LocalExecutor stops them.
   */
  unadopted(): ReplicaSpec[] {
    for (const [key, { lostAt }] of this.undesiredLost)
      if (this.now() - lostAt >= LOST_START_WAIT_MS) this.undesiredLost.delete(key);
    const givenUp = [...this.failures.values()].filter((f) => f.lostAt !== undefined && this.givenUp(f.spec));
    return [...givenUp, ...this.undesiredLost.values()].map(({ spec }) => spec);
  }

  /** An unadopted lost start's record found: not looked for again (still given up on, if it was). */
  settled(spec: ReplicaSpec): void {
    this.undesiredLost.delete(keyOf(spec));
    const failure = this.failures.get(keyOf(spec));
    if (failure) delete failure.lostAt;
  }

  /** Failed too often to be tried again: reported failed until its generation leaves. */
  givenUp(spec: ReplicaSpec): boolean {
    return (this.failures.get(keyOf(spec))?.attempts ?? 0) >= SPAWN_ATTEMPTS;
  }

  /** Forgets replicas no longer desired; the statuses of those given up on. */
  retain(desired: readonly ReplicaSpec[]): ReplicaStatus[] {
    const current = new Set(desired.map(keyOf));
    for (const [key, { spec, lostAt }] of this.failures) {
      if (current.has(key)) continue;
      this.failures.delete(key);
      if (lostAt !== undefined) this.undesiredLost.set(key, { spec, lostAt });
    }
    return [...this.failures.values()].filter(({ spec }) => this.givenUp(spec)).map(statusOf);
  }
}

function statusOf(failure: { attempts: number; error: string; spec: ReplicaSpec }): ReplicaStatus {
  const { spec } = failure;
  return {
    jobId: spec.jobId,
    generation: spec.generation,
    rank: spec.rank,
    node: spec.node,
    phase: 'failed',
    exitCode: SPAWN_FAILED_EXIT,
    reason: `could not be started (${failure.attempts} attempts): ${failure.error}`,
    ranForMs: 0,
  };
}
