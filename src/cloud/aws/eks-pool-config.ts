// What an EksNodePool is configured with, and its defaults: apart so the pool's parts can name it.
import type { RetryPolicy } from '../retry.ts';

export interface EksNodePoolConfig {
  readonly clusterName: string;
  readonly nodegroupName: string;
  /** For logs only: the clients carry their own region. */
  readonly region?: string;
  readonly gpusPerNode: number;
  /** The type boa is configured with (BOA_INSTANCE_TYPE), for what a group of another type is told. */
  readonly instanceType?: string;
  /** The operator's cap on nodes (maxNodes), below the group's own maxSize. */
  readonly hardCap?: number;
  /**
   * How long a resize follows the update it sent (default 30 s; a scaling update usually ends within
   * seconds). One still InProgress then is left in flight: describe() checks it once a call, and no
   * other resize is sent until it has ended. Nothing waits for an update that hangs.
   */
  readonly updateWaitMs?: number;
  /** Throttling and transient errors (default DEFAULT_RETRY). */
  readonly retry?: RetryPolicy;
  /**
   * While another update holds the group (ResourceInUseException): default 3 attempts, 5 s then 10 s
   * apart; then the resize fails and the next pass sends it again, so no pass waits minutes.
   */
  readonly inUse?: RetryPolicy;
  /**
   * Labels that identify the group (infra/cluster.ts NODE_ROLE_LABEL): when the configured name is gone
   * (the group was replaced, e.g. after an instance-type change), the pool follows the one group carrying
   * them. Default { 'boa/node-role': 'gpu' }.
   */
  readonly labels?: Readonly<Record<string, string>>;
  /** Failed launches this recent are reported by describe() (default 15 minutes). */
  readonly launchFailureWindowMs?: number;
}

/** infra/cluster.ts puts NODE_ROLE_LABEL = 'gpu' on the GPU node group. */
export const DEFAULT_LABELS = { 'boa/node-role': 'gpu' } as const;

export const DEFAULT_IN_USE: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5_000, maxDelayMs: 10_000 };
