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
  /** The group as the cloud names it now (EKS: it may have been replaced under a new name or ARN). */
  readonly name?: string;
  readonly arn?: string;
  /** The cloud's status of the group (EKS: ACTIVE, DEGRADED, UPDATING, ...). */
  readonly status?: string;
  /** What the cloud reports wrong with the group (EKS health.issues), e.g. launch failures. */
  readonly issues?: readonly { readonly code: string; readonly message: string }[];
  /**
   * Why the pool refuses to raise the group now (EKS: its instances have another GPU count than the
   * configured type's): the reconciler holds the desired size at most where it is; lowering goes on.
   */
  readonly refusesRaises?: string;
  /**
   * The GPUs of one of the group's nodes where the pool knows its instance types (EKS: the most of the
   * types the group names and its instances had at the last listing), which may not be the configured
   * gpusPerNode (a type changed outside the stack). Absent: not known, the configured count.
   */
  readonly gpusPerNode?: number;
  /** Instance launches that failed recently (ASG scaling activities), newest first. */
  readonly launchFailures?: readonly { readonly at: number; readonly message: string }[];
}

/** A node that exists and is paid for: the ledger's truth. */
export interface PoolNode {
  readonly id: string;
  /**
   * When it was launched, ms since the epoch: the ledger pays a billed node from here (on EC2 the
   * LaunchTime, a few pending seconds before billing starts at running; see billed).
   */
  readonly launchedAt: number;
  readonly gpus: number;
  /** Ready to run jobs: booted, joined (on EKS: Kubernetes Ready, not cordoned, its GPUs advertised). */
  readonly ready: boolean;
  /** The name allocations and replicas use (on EKS the Kubernetes node name, once registered); default id. */
  readonly name?: string;
  /** Billing has started (EC2 bills from running, not pending); default true. */
  readonly billed?: boolean;
  readonly cordoned?: boolean;
  /**
   * Jobs placed here stay, nothing new is placed here: a node briefly not ready (its grace), or one EKS
   * will drain for a node group update.
   */
  readonly keepOnly?: boolean;
  /**
   * Launched from an earlier launch template version than its group's (on EKS: the nodes a node group
   * update drains and replaces).
   */
  readonly outdated?: boolean;
  /** Already on its way out (released or shutting down): still paid until gone, never counted as kept. */
  readonly leaving?: boolean;
  /**
   * GPUs held there by pods boa did not create (on EKS: non-terminated pods bound to it requesting
   * nvidia.com/gpu): placement leaves them, and scale-in ranks them as load (such a node goes after idle
   * ones, but goes when the count asks: boa's budget pays for it).
   */
  readonly foreignGpus?: number;
  /** Those pods (namespace/name), for the log when boa removes the node. */
  readonly foreignPods?: readonly string[];
  /** Why a node is not ready, for status and logs: booting, registering, not-ready, no-gpus, cordoned, leaving. */
  readonly waitingFor?: string;
  /**
   * The node group it belongs to was replaced (EKS: an instance-type change): the node is paid until the
   * cloud deletes that group, so it is listed `leaving` (never kept, chosen or resized) and, while ready,
   * `keepOnly` (its jobs stay, nothing new goes there). The old group's name.
   */
  readonly replacedGroup?: string;
}

/** A node group as a pool followed it: kept by the service across restarts (NodePool.followGroups). */
export interface GroupRecord {
  readonly name: string;
  readonly arn?: string;
  /** Its Auto Scaling group (EKS): tells a group replaced under the same name from its successor. */
  readonly autoScalingGroup?: string;
}

/** The group a pool follows and the replaced ones whose nodes may still run (paid until they go). */
export interface FollowedGroups {
  readonly current?: GroupRecord;
  readonly replaced: readonly (GroupRecord & { readonly since: number })[];
}

export interface TerminateResult {
  /** Terminated now (the group's desired size lowered by one each). */
  readonly terminated: readonly string[];
  /**
   * Terminated now with the desired size left as it was, since lowering it would break the group's
   * minimum: the group launches a replacement (for a node that never became ready, what is wanted).
   * Absent when there are none.
   */
  readonly replaced?: readonly string[];
  /** Not in the group any more (terminated earlier, by anyone): nothing was sent that changed anything. */
  readonly alreadyGone: readonly string[];
}

export interface ResizeResult {
  /** The desired size actually requested, after clamping to the group's bounds. */
  readonly requested: number;
  /** Cloud update id, when the cloud tracks one. */
  readonly updateId?: string;
}

/** An instance the group launched, and when it was gone (absent: not known to be gone). */
export interface LaunchedInstance {
  readonly id: string;
  readonly launchedAt: number;
  readonly goneAt?: number;
  /** Its GPUs where the pool knows them (EKS: the group's type); default the configured gpusPerNode. */
  readonly gpus?: number;
}

/** The group's launches since a time, and when each termination since ended, by instance id. */
export interface GroupChanges {
  readonly launched: readonly LaunchedInstance[];
  /** Instances whose termination started since and has ended (EC2 bills them no more), launched whenever. */
  readonly gone: ReadonlyMap<string, number>;
}

export interface NodePool {
  readonly kind: 'local' | 'aws';
  describe(): Promise<NodeGroupState>;
  /**
   * Sets the desired node count, clamped to the group's bounds (and never above them). Idempotent for the
   * same target; retries throttling with backoff. Another update in flight is not waited out: the call
   * fails soon (EKS: 3 attempts within 15 s) and the next pass asks again (docs/nodes.md).
   */
  setDesiredSize(target: number): Promise<ResizeResult>;
  /**
   * A cloud update a previous run of the service sent and stored (its resize `requested`): followed as
   * the pool's own, so describe() reports it in flight until it ends, and nothing is sent meanwhile.
   */
  adoptUpdate?(updateId: string): void;
  /**
   * The groups a previous run followed (stored; undefined: none stored), and where to store them when
   * they change: a group replaced since (a new name or ARN) keeps its nodes listed, as `replacedGroup`,
   * until none is left. Called before the first listing. Absent where a pool's group is never replaced.
   */
  followGroups?(stored: FollowedGroups | undefined, store: (groups: FollowedGroups) => void): void;
  /** Nodes that exist now (booting or ready), with their launch times. */
  listNodes(): Promise<PoolNode[]>;
  /**
   * Instances launched since `since` (ms), gone or not, and the terminations that ended since (EKS: the
   * Auto Scaling group's activities): the ledger charges the launches no listing showed
   * (service/unseen-nodes.ts), and ends a node no longer listed when its termination ended
   * (service/gone-nodes.ts). Absent where every node is listed.
   */
  launchedSince?(since: number): Promise<GroupChanges>;
  /** Marks nodes unschedulable, so nothing new lands there before they are removed. Idempotent. */
  cordon(nodeIds: readonly string[]): Promise<void>;
  /** Opens nodes boa cordoned to jobs again: a removal called off (the target rose). Idempotent. */
  uncordon(nodeIds: readonly string[]): Promise<void>;
  /**
   * Removes exactly these nodes and lowers the desired size by as many (EKS:
   * TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity). Nodes already gone are
   * reported, not an error, so a call repeated after a crash changes nothing more.
   */
  terminate(nodeIds: readonly string[]): Promise<TerminateResult>;
  /**
   * Protects nodes from the group's own scale-in (or lifts it), so lowering the desired size can only
   * remove unprotected ones. A no-op where the pool itself picks nothing (local).
   */
  protect(nodeIds: readonly string[], protect: boolean): Promise<void>;
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
  /** The replicas' working directory (default: the service's on the local executor, the image's on Kubernetes). */
  readonly workingDir?: string;
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
  /** The full environment the replica gets: BOA_*, WORLD_SIZE, NNODES, NODE_RANK, BOA_FIRST_RANK, MASTER_ADDR, ... */
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
  /**
   * Ended because something other than boa stopped it (a SIGTERM boa did not send, as at a machine's
   * shutdown; a pod deleted or evicted by someone else): not finished, whatever its exit code, since a
   * job that checkpoints on SIGTERM exits 0 then. Reported with phase 'failed'.
   */
  readonly interrupted?: boolean;
  /**
   * Why a restart would fail the same way, and what to check: the job's own command exited 127 or 126
   * (src/cloud/command-exits.ts), or its checkpoint volume claim is gone (the Kubernetes executor,
   * claim-recheck.ts). The job fails at once, its restarts unused. Reported with phase 'failed'.
   */
  readonly notRestartable?: string;
  /**
   * A replica stopping: when its grace period ends (epoch ms), when SIGKILL comes at the latest (the
   * pod's deletionTimestamp; the local SIGTERM's time plus terminationGraceSeconds).
   */
  readonly killAt?: number;
  /** How long an ended replica's command (container) ran, when the executor knows it. */
  readonly ranForMs?: number;
  /**
   * When an ended replica's command ended (epoch ms), when the executor knows it: a job that finished
   * while the service was down is finished then, not when the service came back.
   */
  readonly endedAt?: number;
}

/** Which replica's log, and how much of it. */
export interface ReplicaLogQuery {
  readonly jobId: number;
  readonly rank: number;
  readonly generation?: number;
  readonly tailLines: number;
  /** Followed: from where a follower got to (a cursor this executor gave, and the bytes read past it). */
  readonly from?: LogPosition;
}

/**
 * A place in a replica's log: `skip` bytes of text past `cursor`, which is opaque outside its executor
 * (the local executor's is `h` and a byte of all the log has had; the Kubernetes executor's a second
 * and the lines before the text within it) but for LOG_START, every executor's. A follower cut off asks again from the
 * position it was given plus what it got.
 */
export interface LogPosition {
  readonly cursor: string;
  readonly skip: number;
}

/** The cursor of a log's beginning, for every executor. */
export const LOG_START = 'start';

/** A cursor this executor did not make (malformed, or another executor's): the asker's mistake. */
export class LogCursorError extends Error {
  constructor(cursor: string, allowed: string) {
    super(`cursor ${JSON.stringify(cursor).slice(0, 80)} is not a place in this executor's logs: ${allowed}`);
  }
}

export interface ReplicaLog {
  readonly generation: number;
  readonly text: string;
}

/** A replica's log as it is written (`tail -f`, `kubectl logs -f`). */
export interface ReplicaLogFollow {
  readonly generation: number;
  /**
   * Its last `tailLines` lines, then what it writes, until it has ended or the follower's signal aborts.
   * A local log's are its bytes as written (Buffers, not decoded: a follower's place counts bytes of the
   * file, and a log need not be UTF-8); a pod's, text.
   */
  readonly chunks: AsyncIterable<string | Buffer>;
  /** Where in the log the chunks start: a follower cut off asks again from here plus what it got. */
  readonly from: LogPosition;
  /**
   * The position asked for is no longer in the log (the kubelet rotated it away, or a kept log lacks its
   * beginning): the chunks go on from the log's newest line, and lines between may be missing.
   */
  readonly gap?: true;
}

/**
 * A checkpoint claim a job cannot be taken on now: `refused`, it cannot work as it is (missing, not
 * ReadWriteMany, never going to bind, Lost); `binding`, still Pending but able to bind by itself (an
 * Immediate class's volume being provisioned); `unavailable`, the claim could not be read (the API server
 * out of reach); `forbidden`, boa's own role may not read it, which only a redeploy fixes.
 */
export interface VolumeClaimProblem {
  readonly kind: 'refused' | 'binding' | 'unavailable' | 'forbidden';
  readonly message: string;
}

/**
 * Runs jobs' replicas where placement put them. Level-triggered: `reconcile` compares the replicas that
 * should exist with those that do and fixes the difference: replicas of another generation or of a job
 * not in `desired` are stopped with the grace period (SIGTERM, then SIGKILL; pod deletion with
 * terminationGracePeriodSeconds); a generation starts only once its job's older replicas are gone;
 * missing replicas of the current generation are created (an adapter whose nodes can go without boa,
 * Kubernetes', creates none of a job's while one of their nodes is not listed, reporting them starting
 * and why: a pod bound to a gone node never starts, and its deletion waits for the pod garbage
 * collector), but one seen and then gone without boa stopping it is reported as it was last seen:
 * interrupted if it still ran, or was stopped from outside (its job resumes as a new generation, every
 * rank together), else as it ended (a rank that finished is not run again). Ended
 * replicas stay reported until their generation leaves `desired`, so the service sees every exit; one
 * that ended on its own before its generation left (not stopped by boa) is reported at least once after
 * too, never as succeeded when boa's stop ended it, so a rank 0 that finished as its job was rescaled
 * is seen to have finished.
 * Idempotent, and safe after a restart:
 * replicas that survived the service are adopted, never started twice.
 */
export interface Executor {
  readonly kind: 'local' | 'kubernetes';
  /**
   * Why a workload cannot run here, naming the field (e.g. `workload.command` when the local executable
   * is not found), or undefined. Checked at submission so nothing is stored for a job that cannot run.
   */
  checkWorkload?(workload: Workload): { field: string; message: string } | undefined;
  /**
   * Why this executor cannot keep a job's checkpoints on the volume claim `claim`
   * (workload.checkpoint.volumeClaim) now, or undefined when it can. Asked at submission, before
   * anything is stored.
   */
  checkVolumeClaim?(claim: string): Promise<VolumeClaimProblem | undefined>;
  /** Where rank 0 listens for rendezvous (MASTER_ADDR/MASTER_PORT); default: rank 0's node, port 29500. */
  rendezvous?(jobId: number, generation: number, rank0Node: string): { addr: string; port: number };
  reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]>;
  /**
   * Jobs whose replicas the last reconcile could not make for a reason they are not to blame for (the
   * API server refusing the create: 5xx, throttling, boa's token for a moment), though it read the
   * replicas: their start deadlines start again, as after a reconcile that failed.
   */
  outage?(): ReadonlySet<number>;
  /**
   * The last `tailLines` lines a replica wrote, of `generation` or else of the newest generation whose
   * log is kept; undefined when none is (it never ran here; on Kubernetes, its pod went and boa kept no
   * log of it).
   */
  logs?(query: ReplicaLogQuery): Promise<ReplicaLog | undefined>;
  /** The same replica's log, followed; undefined when none is kept. */
  followLog?(query: ReplicaLogQuery, signal: AbortSignal): Promise<ReplicaLogFollow | undefined>;
  /** Jobs whose logs are kept here, ended ones included (retention.ts deletes the old ones'). */
  keptLogJobs?(): number[];
  /** Deletes what is kept of a job that has ended (its logs, every generation); false while it still runs here. */
  deleteKeptLogs?(jobId: number): boolean;
  /** Stops watching; replicas keep running (a restarted service adopts them). */
  close(): Promise<void>;
}
