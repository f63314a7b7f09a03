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
