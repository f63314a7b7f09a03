import { deleteJobFolder, jobsWithFolders, KEPT_GENERATIONS, pruneGenerations } from '../job-folders.ts';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type {
  DesiredJob,
  Executor,
  ReplicaLog,
  ReplicaLogFollow,
  ReplicaLogQuery,
  ReplicaStatus,
  Workload,
} from '../../service/ports.ts';
import { adoptRecorded, type StrayReplica } from './executor-adopt.ts';
import { checkLocalWorkload } from './executor-command.ts';
import { generationDir, recordFile, removeRecords, writeRecord } from './executor-records.ts';
import { findLostStrays, type LostStray, lostStraysLeft } from './lost-start-strays.ts';
import { groupIsReplicas, realDir } from './replica-processes.ts';
import { ReplicaLauncher } from './launcher.ts';
import { type LocalReplica, refreshLiveness, replicaStatus } from './local-replica.ts';
import { capReplicaLogs, DEFAULT_LOG_CAP, type LogCap } from './log-cap.ts';
import { LocalReplicaLogs } from './replica-logs.ts';
import { procSnapshot, type ProcSnapshot } from './proc-snapshot.ts';
import { stopLostReplica, stopReplica } from './replica-stop.ts';
import { killReplicaGroups, signalQuietly } from './replica-signals.ts';
import { RendezvousPorts } from './rendezvous-ports.ts';
import { ReplicaStarts } from './replica-start.ts';
import { SpawnFailures } from './spawn-failures.ts';

export interface LocalExecutorOptions {
  /** The service's data directory: replicas' records and logs go to DATA_DIR/jobs/<id>/<generation>/. */
  readonly dataDir: string;
  /** SIGTERM to SIGKILL when a replica is stopped. */
  readonly terminationGraceSeconds: number;
  readonly logger?: Logger;
  /** Wall-clock milliseconds: what records and reports are stamped with. */
  readonly now?: () => number;
  /**
   * Steady milliseconds (default performance.now()): what grace periods are counted on, so a clock
   * stepped forward (a laptop waking, NTP) does not SIGKILL a replica mid-checkpoint.
   */
  readonly monotonicNow?: () => number;
  /** What starts the supervisors (tests inject one that fails). */
  readonly launcher?: Pick<ReplicaLauncher, 'launch' | 'close'>;
  /** How a replica's log is bounded (tests use small ones). */
  readonly logCap?: LogCap;
  /** How often a followed log is checked for more (default 500 ms). */
  readonly followPollMs?: number;
  /**
   * BOA_URL as replicas get it now: running ones adopted with another get it in their BOA_URL_FILE, and
   * are named in a warning.
   */
  readonly serviceUrl?: string;
}

const keyOf = (jobId: number, generation: number, rank: number) => `${jobId}/${generation}/${rank}`;

/**
 * The embedded default's executor: each replica is a real process on this machine, started through
 * replica-supervisor.sh (POSIX sh) in its own process group so it survives the service, with its pid and exit
 * recorded under DATA_DIR/jobs. A new instance adopts what the records list (guarding against pid
 * reuse), so a restarted service never starts a replica twice. Level-triggered; see the Executor port.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;
  private readonly replicas = new Map<string, LocalReplica>();
  /** Replicas found running without their record at start, being stopped (adopt()). */
  private strays: StrayReplica[] = [];
  /** Supervisors of lost starts nothing adopts (given up on, or no longer desired), being stopped. */
  private lostStrays: LostStray[] = [];
  private readonly jobsDir: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly monotonicNow: () => number;
  private readonly graceMs: number;
  private readonly launcher: Pick<ReplicaLauncher, 'launch' | 'close'>;
  private readonly spawnFailures = new SpawnFailures();
  private readonly ports = new RendezvousPorts();
  private readonly replicaStarts: ReplicaStarts;
  private queue: Promise<void> = Promise.resolve();
  private readonly logCap: LogCap;
  private readonly replicaLogs: LocalReplicaLogs;
  private readonly logTimer: NodeJS.Timeout;
  private capping: Promise<void> | undefined;

  constructor(options: LocalExecutorOptions) {
    this.jobsDir = join(realDir(options.dataDir), 'jobs');
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({ component: 'local-executor' });
    this.now = options.now ?? Date.now;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.graceMs = options.terminationGraceSeconds * 1000;
    this.launcher = options.launcher ?? new ReplicaLauncher();
    this.replicaStarts = new ReplicaStarts({
      jobsDir: this.jobsDir,
      graceSeconds: String(Math.ceil(options.terminationGraceSeconds)),
      launcher: this.launcher,
      spawnFailures: this.spawnFailures,
      ports: this.ports,
      logger: this.logger,
      now: this.now,
      pruneGenerations: (jobId) => this.pruneGenerations(jobId),
      track: (replica) => {
        this.replicas.set(keyOf(replica.jobId, replica.generation, replica.rank), replica);
        this.record(replica);
      },
    });
    this.logCap = options.logCap ?? DEFAULT_LOG_CAP;
    this.replicaLogs = new LocalReplicaLogs(this.jobsDir, options.followPollMs ?? 500, (jobId, g, rank) =>
      this.replicas.get(keyOf(jobId, g, rank)),
    );
    this.adopt(options.serviceUrl);
    // Its own timer, not the reconcile's: a tick can be minutes apart, and a log can grow by gigabytes.
    this.logTimer = setInterval(() => this.capLogs(), this.logCap.checkMs);
    this.logTimer.unref();
  }

  /** One pass at a time: a pass copying large logs can outlast the timer's period. */
  private capLogs(): void {
    if (this.capping) return;
    this.capping = capReplicaLogs(this.replicas.values(), this.logCap, this.logger).finally(() => {
      this.capping = undefined;
    });
  }

  checkWorkload(workload: Workload) {
    return checkLocalWorkload(workload);
  }

  /** Replicas here are processes on this machine: nothing mounts a claim (BOA_CHECKPOINT_DIR would name no folder). */
  async checkVolumeClaim(claim: string) {
    return {
      kind: 'refused' as const,
      message:
        `the local executor runs replicas as processes on this machine and mounts no volume claim ("${claim}"); ` +
        'give checkpoint.uri (--checkpoint) instead: a folder here, or a store such as s3://bucket/run',
    };
  }

  /** Rank 0 listens on this machine, on a port no other generation of this executor's jobs holds. */
  rendezvous(jobId: number, generation: number) {
    const port = this.ports.portOf(jobId, generation, generationDir(this.jobsDir, jobId, generation));
    return { addr: '127.0.0.1', port };
  }

  private adopt(serviceUrl: string | undefined): void {
    const clocks = { now: this.now(), steadyNow: this.monotonicNow() };
    const found = adoptRecorded(this.jobsDir, clocks, this.graceMs, this.logger, this.ports, serviceUrl);
    for (const r of found.replicas) this.replicas.set(keyOf(r.jobId, r.generation, r.rank), r);
    this.strays = found.strays;
  }

  async logs(query: ReplicaLogQuery): Promise<ReplicaLog | undefined> {
    return this.replicaLogs.read(query);
  }

  async followLog(query: ReplicaLogQuery, signal: AbortSignal): Promise<ReplicaLogFollow | undefined> {
    return this.replicaLogs.follow(query, signal);
  }

  reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    // One at a time: a start waits for the launcher, and two passes must never both start a replica.
    const pass = this.queue.then(() => this.reconcileNow(desired));
    this.queue = pass.then(
      () => undefined,
      () => undefined,
    );
    return pass;
  }

  private async reconcileNow(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    const wanted = new Map<number, DesiredJob>();
    for (const job of desired) wanted.set(job.jobId, job);
    const now = this.now();
    const steadyNow = this.monotonicNow();
    // Jobs whose older replicas are still alive: their new generation waits until those are gone.
    const blocked = new Set<number>();
    // /proc as this pass sees it, read once if any replica needs it (replica-signals.ts).
    const procs = procSnapshot();
    this.strays = this.strays.filter(({ stray, killAt }) => {
      // Its groups, while a member's environment says they are still this replica's (never a stranger's).
      const alive = stray.groups.filter((group) => groupIsReplicas(group, stray, procs));
      if (alive.length === 0) return false;
      if (steadyNow >= killAt) for (const group of alive) signalQuietly(-group, 'SIGKILL');
      blocked.add(stray.jobId);
      return true;
    });
    const tracked = (r: { jobId: number; generation: number; rank: number }) =>
      this.replicas.has(keyOf(r.jobId, r.generation, r.rank));
    const lost = findLostStrays(
      this.spawnFailures,
      this.jobsDir,
      tracked,
      steadyNow + this.graceMs,
      this.logger,
    );
    this.lostStrays = lostStraysLeft([...this.lostStrays, ...lost], steadyNow, procs, blocked);
    // Of generations no longer wanted, those that ended on their own (not by boa's stop): said once more,
    // kept until a pass has returned them (a pass that fails, a service that stops before it reads the
    // statuses, must not lose "rank 0 finished": its record goes only when it is forgotten).
    const endedBeforeStop: LocalReplica[] = [];
    // Nodes where a replica boa stops still runs (its grace): another job's replica starts there only once
    // it is gone, as a kubelet admits a pod only on GPUs no terminating pod holds (two processes would
    // share the GPUs meanwhile). Replicas not being stopped share a node only as placement allotted it.
    const stoppingOn = new Set<string>();
    for (const [key, replica] of this.replicas) {
      if (replica.unrecorded) this.record(replica);
      refreshLiveness(replica, now);
      const job = wanted.get(replica.jobId);
      const current =
        job !== undefined &&
        replica.generation === job.generation &&
        job.replicas.some((r) => r.rank === replica.rank);
      // One boa stopped is never current again (a clock stepped back can make its generation wanted
      // once more): it goes on stopping, and its exit reads as interrupted, so its job resumes as a new
      // generation; taken back, its SIGTERM's exit 0 read as done (found in review).
      if (current && replica.stopAt === undefined) continue;
      if (replica.alive) {
        stopReplica(replica, { now, steadyNow }, this.graceMs, this.logger, procs);
        blocked.add(replica.jobId);
        stoppingOn.add(replica.node);
      } else if (stopLostReplica(replica, { now, steadyNow }, this.graceMs, this.logger, procs)) {
        // Its supervisor lost, its command still running: its next generation waits as for any stop.
        blocked.add(replica.jobId);
        stoppingOn.add(replica.node);
      } else if (current) {
        continue;
      } else if (replica.exit && !replica.exit.stopped && !replica.reportedEnded) {
        endedBeforeStop.push(replica);
      } else {
        this.forget(key, replica, procs);
      }
    }
    const starts: Promise<void>[] = [];
    for (const job of desired) {
      if (blocked.has(job.jobId)) continue;
      // Every rank together (a rank started alone would wait at its rendezvous for the held one).
      if (job.replicas.some((spec) => stoppingOn.has(spec.node))) continue;
      for (const spec of job.replicas) {
        // One gone without an exit record (killed from outside, supervisor and all) is reported
        // interrupted, not started again: its job resumes as a new generation, every rank together.
        const key = keyOf(spec.jobId, spec.generation, spec.rank);
        if (this.replicas.has(key) || this.spawnFailures.givenUp(spec)) continue;
        starts.push(this.replicaStarts.start(spec));
      }
    }
    await Promise.all(starts);
    const failedToStart = this.spawnFailures.retain(desired.flatMap((job) => job.replicas));
    this.ports.retain([...desired, ...this.replicas.values()]);
    const reportedAt = this.now();
    for (const replica of endedBeforeStop) replica.reportedEnded = true;
    return [
      ...[...this.replicas.values()].map((r) => replicaStatus(r, reportedAt, this.graceMs)),
      ...failedToStart,
    ];
  }

  keptLogJobs(): number[] {
    return jobsWithFolders(this.jobsDir);
  }

  deleteKeptLogs(jobId: number): boolean {
    // Its folder holds its replicas' records too: never while one is still tracked.
    for (const key of this.replicas.keys()) if (key.startsWith(`${jobId}/`)) return false;
    deleteJobFolder(this.jobsDir, jobId);
    return true;
  }

  async close(): Promise<void> {
    // Replicas keep running (a restarted service adopts them); only the launcher ends.
    clearInterval(this.logTimer);
    await this.capping;
    await this.queue;
    await this.launcher.close();
  }

  /** Its pid record, which a restarted service adopts it by; one that cannot be written is tried again. */
  private record(replica: LocalReplica): void {
    const { pid, node, startedAt, boaUrl } = replica;
    try {
      writeRecord(recordFile(replica.dir, replica.rank, 'pid'), { pid, node, startedAt, boaUrl });
      delete replica.unrecorded;
    } catch (error) {
      if (!replica.unrecorded)
        this.logger.error(
          { event: 'replica_record_failed', jobId: replica.jobId, rank: replica.rank, error: String(error) },
          'replica started, but its pid record could not be written: tried again each pass',
        );
      replica.unrecorded = true;
    }
  }

  private forget(key: string, replica: LocalReplica, procs: ProcSnapshot): void {
    // One from a boa older than 2026-11-28 did not end its command's group when the command ended: never
    // leave one behind (a lost supervisor's command was stopped before: stopLostReplica). A supervisor of
    // today's ends that group itself, so this then signals nothing.
    killReplicaGroups(replica, procs);
    // Forgotten even if its records stay (a folder made unwritable from outside): throwing here stopped
    // every pass, so no job's exit was seen again, and a restart threw on the same records (found in
    // review). Those left are adopted as ended at a restart and removed then.
    try {
      removeRecords(replica.dir, replica.rank);
    } catch (error) {
      this.logger.warn(
        { event: 'replica_record_failed', dir: replica.dir, rank: replica.rank, error: String(error) },
        "an ended replica's records could not be removed",
      );
    }
    this.replicas.delete(key);
  }

  /** Keeps a job's newest KEPT_GENERATIONS generations' folders (job-folders.ts pruneGenerations). */
  private pruneGenerations(jobId: number): void {
    const tracked = (generation: number) =>
      [...this.replicas.keys()].some((key) => key.startsWith(`${jobId}/${generation}/`));
    const pruned = pruneGenerations(this.jobsDir, jobId, KEPT_GENERATIONS, tracked);
    if (pruned.length > 0)
      this.logger.info(
        { event: 'job_generations_pruned', jobId, generations: pruned },
        "old generations' logs deleted",
      );
  }
}
