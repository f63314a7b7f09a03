/**
 * What the node reconciler (reconciler.ts) is given: its settings and ports at construction, and each
 * tick's target and view of the world.
 */
import type { Logger } from 'pino';
import type { NodeRemovals } from '../../store/node-removals.ts';
import type { Repository } from '../../store/repository.ts';
import type { Clock, NodeGroupState, NodePool, PoolNode } from '../ports.ts';
import type { BackoffPolicy } from './capacity.ts';
import type { GpusInUse } from './victims.ts';

export interface NodeSettings {
  /** A node not ready for jobs this long after launch is terminated (default 900 s). */
  readonly provisionMs: number;
  /**
   * A node that was ready and is briefly not (NotReady, GPUs unadvertised) keeps the jobs on it this long
   * before they move (default 300 s, Kubernetes' own eviction delay for not-ready nodes); 0: at once.
   */
  readonly notReadyGraceMs?: number;
  readonly backoff: BackoffPolicy;
  /** The operator's cap on nodes (maxNodes), below the group's own maximum. */
  readonly maxNodes?: number;
  /** GPUs of one of the group's nodes: a replaced group's node of another type counts as its share. */
  readonly gpusPerNode?: number;
}

export interface NodeReconcilerDeps {
  readonly pool: NodePool;
  readonly removals: NodeRemovals;
  readonly repo: Pick<
    Repository,
    'insertResize' | 'updateResize' | 'lastResize' | 'getSetting' | 'putSetting' | 'deleteSetting'
  >;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: NodeSettings;
  /** Called with the group as the cloud reports it after each pass (boa's own changes included). */
  readonly onGroup?: (group: NodeGroupState) => void;
  /**
   * Lists the pool for the service after a pass raised the size: the nodes it launched, which status
   * and /metrics would otherwise leave out until the next tick lists them (the ledger counts them from
   * their launch either way; on EKS an instance is listed once EC2 has it, and not paid while pending).
   */
  readonly listBetweenTicks?: () => Promise<void>;
}

/** What a tick hands over: the target, and the world as the tick saw it. */
export interface NodeTickInput {
  readonly target: number;
  readonly nodes: readonly PoolNode[];
  readonly group: NodeGroupState | undefined;
  readonly gpusInUse: GpusInUse;
  /**
   * gpusInUse less the nodes that only may hold a replica, the executor not having answered since boa
   * started (Execution.mayHoldReplicas): such a guess keeps a node, but must not restart a not-ready
   * node's clock (readiness.holdsReplicas), which would pay a node that never came up for up to another
   * provisionMs (found in review). Absent: gpusInUse is all known.
   */
  readonly knownInUse?: GpusInUse;
  /**
   * The most nodes the budget lets boa pay for now (the spend ceiling's, within the heartbeat guard's).
   * Nodes still paid on their way out count in it: a raise waits for them to go (paid-cap.ts).
   */
  readonly paidCap?: number;
}
