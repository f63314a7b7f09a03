/**
 * The service talks to the world only through these ports, so tests and the demo inject a virtual
 * clock and an emulated node pool, and production injects AWS adapters (src/cloud).
 */

/** Milliseconds since the epoch; the scheduler never reads the wall clock directly. */
export interface Clock {
  now(): number;
}

/** Bounds and state of the node group, as the cloud reports them. */
export interface NodeGroupState {
  readonly minSize: number;
  readonly maxSize: number;
  readonly desiredSize: number;
  /** An update the cloud is still applying (EKS update id), if any. */
  readonly updateInFlight?: string;
}

/** A node that exists and is paid for: the ledger's truth. */
export interface PoolNode {
  readonly id: string;
  /** When it was launched (billing starts), ms since the epoch. */
  readonly launchedAt: number;
  readonly gpus: number;
  /** Ready to run jobs (booted and joined). */
  readonly ready: boolean;
}

export interface ResizeResult {
  /** The desired size actually requested, after clamping to the group's bounds. */
  readonly requested: number;
  /** Cloud update id, when the cloud tracks one. */
  readonly updateId?: string;
}

export interface NodePool {
  readonly kind: 'local' | 'aws';
  describe(): Promise<NodeGroupState>;
  /**
   * Sets the desired node count, clamped to the group's bounds (and never above them). Idempotent for the
   * same target; waits and retries while another update is in flight; retries throttling with backoff.
   */
  setDesiredSize(target: number): Promise<ResizeResult>;
  /** Nodes that exist now (booting or ready), with their launch times. */
  listNodes(): Promise<PoolNode[]>;
}

export interface MetricDatum {
  readonly name: string;
  readonly value: number;
  readonly unit: 'Count' | 'Seconds' | 'None';
}

export interface MetricsSink {
  /** Publishes a batch of gauges stamped with one time (ms since the epoch). */
  put(metrics: readonly MetricDatum[], at: number): Promise<void>;
}

/**
 * What a job runs, given at submission. A job without one launches itself (today's protocol) and
 * only polls its allocation; a job with one is run by the executor.
 */
export interface Workload {
  /** Container image (Kubernetes); ignored by the local executor. */
  readonly image?: string;
  /** The program and its arguments; `command[0]` is the executable. */
  readonly command: readonly string[];
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cpuPerGpu?: number;
  /** Kubernetes quantity per GPU, e.g. "16Gi". */
  readonly memoryPerGpu?: string;
  /** Where the job keeps checkpoints: a volume claim (Kubernetes) or a URI/path passed as BOA_CHECKPOINT_DIR. */
  readonly checkpoint?: { readonly volumeClaim?: string; readonly uri?: string };
}

/** One replica: the part of a job's placement on one node (one process or one pod). */
export interface ReplicaSpec {
  readonly jobId: number;
  readonly generation: number;
  /** NODE_RANK: 0 for the first node of the placement. */
  readonly rank: number;
  /** The node it must run on (a pool node id; on EKS the Kubernetes node name). */
  readonly node: string;
  /** GPUs boa gave the job on that node (NPROC_PER_NODE). */
  readonly gpus: number;
  readonly workload: Workload;
  /** The full environment the replica gets: BOA_*, WORLD_SIZE, NNODES, NODE_RANK, MASTER_ADDR, ... */
  readonly env: Readonly<Record<string, string>>;
}

/** All replicas of one generation of one job that should exist now. */
export interface DesiredJob {
  readonly jobId: number;
  readonly generation: number;
  readonly replicas: readonly ReplicaSpec[];
}

export type ReplicaPhase = 'starting' | 'running' | 'stopping' | 'succeeded' | 'failed';

/** A replica as the executor sees it, found by its labels (pods) or its record (local processes). */
export interface ReplicaStatus {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
  readonly node: string;
  readonly phase: ReplicaPhase;
  /** Set once the replica has ended. */
  readonly exitCode?: number;
  readonly reason?: string;
}

/**
 * Runs jobs' replicas where placement put them. Level-triggered: `reconcile` compares the replicas that
 * should exist with those that do and fixes the difference: replicas of another generation or of a job
 * not in `desired` are stopped with the grace period (SIGTERM, then SIGKILL; pod deletion with
 * terminationGracePeriodSeconds); a generation starts only once its job's older replicas are gone;
 * missing replicas of the current generation are (re)created. Ended replicas stay reported until their
 * generation leaves `desired`, so the service sees every exit. Idempotent, and safe after a restart:
 * replicas that survived the service are adopted, never started twice.
 */
export interface Executor {
  readonly kind: 'local' | 'kubernetes';
  reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]>;
  /** Stops watching; replicas keep running (a restarted service adopts them). */
  close(): Promise<void>;
}
