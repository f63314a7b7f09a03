/** What the executor contract's cases share: the harness an adapter gives, and the waits over it. */
import type { DesiredJob, Executor, ReplicaStatus, Workload } from '../../src/service/ports.ts';

export interface ReplicaRef {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
}

/** What the contract needs from an adapter's test set-up. */
export interface ExecutorHarness {
  /** Node names a replica may be placed on (at least two). */
  readonly nodes: readonly string[];
  /** A new executor instance over the same world (a second call is a restarted service). */
  create(options: { terminationGraceSeconds: number }): Promise<Executor>;
  /**
   * A workload that runs until told to exit; with ignoreTerm it ignores SIGTERM (only a kill ends it);
   * with termExitsZero a SIGTERM makes it exit 0, as a job that checkpoints on SIGTERM does.
   */
  workload(options?: { ignoreTerm?: boolean; termExitsZero?: boolean }): Workload;
  /** Makes the replica's program write `text` to its output (its log). */
  say(ref: ReplicaRef, text: string): Promise<void>;
  /** Makes the replica's program exit with this code. */
  exit(ref: ReplicaRef, code: number): Promise<void>;
  /** Kills the replica from outside (kill -9 of its process group; pod deletion), leaving no exit. */
  kill(ref: ReplicaRef): Promise<void>;
  /**
   * Stops the replica from outside with a SIGTERM the executor did not send (a machine shutting down;
   * a pod deleted by someone else), letting its program exit as it handles SIGTERM.
   */
  interrupt(ref: ReplicaRef): Promise<void>;
  /** The environment the replica was started with, once per start. */
  starts(ref: ReplicaRef): Promise<ReadonlyArray<Readonly<Record<string, string>>>>;
  /** SIGTERMs (graceful deletions) the replica received. */
  terminations(ref: ReplicaRef): Promise<number>;
  /** Processes or pods of the replica that exist now, whatever the executor believes. */
  running(ref: ReplicaRef): Promise<number>;
  /**
   * With ContractOptions.nodesGo: the node goes without boa (the cluster no longer lists it), and comes
   * back under the same name.
   */
  removeNode?(node: string): Promise<void>;
  restoreNode?(node: string): Promise<void>;
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** How long a replica may take to start or stop (ms). */
  readonly settleMs?: number;
  /**
   * The adapter's nodes can go without boa (Kubernetes Nodes; not the local executor's, which are
   * slices of this machine): the harness has removeNode and restoreNode.
   */
  readonly nodesGo?: boolean;
}

/** A desired job whose replicas are spread over the harness's nodes, with the env the service gives. */
export function desiredJob(
  harness: ExecutorHarness,
  jobId: number,
  generation: number,
  gpusPerNode: readonly number[],
  workload: Workload,
): DesiredJob {
  const width = gpusPerNode.reduce((a, b) => a + b, 0);
  return {
    jobId,
    generation,
    replicas: gpusPerNode.map((gpus, rank) => ({
      jobId,
      generation,
      rank,
      node: harness.nodes[rank % harness.nodes.length] as string,
      gpus,
      workload,
      env: {
        BOA_JOB_ID: String(jobId),
        BOA_GENERATION: String(generation),
        WORLD_SIZE: String(width),
        NNODES: String(gpusPerNode.length),
        NODE_RANK: String(rank),
        NPROC_PER_NODE: String(gpus),
      },
    })),
  };
}

/** The status the executor reports for this replica, if any. */
export const find = (statuses: readonly ReplicaStatus[], ref: ReplicaRef) =>
  statuses.find((s) => s.jobId === ref.jobId && s.generation === ref.generation && s.rank === ref.rank);

/** What each group of the contract's cases is given by the one entry point (executor-contract.ts). */
export interface ContractContext {
  /** Stands for this test's harness, made fresh before each test: each use goes to it. */
  readonly harness: ExecutorHarness;
  /** A new executor over the harness's world, closed after the test. */
  create(terminationGraceSeconds?: number): Promise<Executor>;
  /** Reconciles until `done` holds for the statuses (level-triggered: repeating is always safe). */
  until(
    executor: Executor,
    desired: readonly DesiredJob[],
    done: (statuses: readonly ReplicaStatus[]) => boolean | Promise<boolean>,
    what: string,
  ): Promise<readonly ReplicaStatus[]>;
  /** Whether the replica was started at least once. */
  started(ref: ReplicaRef): Promise<boolean>;
  /** How long a replica may take to start or stop (ms). */
  readonly settleMs: number;
  readonly options: ContractOptions;
}
