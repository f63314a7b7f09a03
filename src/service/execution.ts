import { publicUrl } from './config.ts';
import type { ServiceJob } from './jobs.ts';
import type { DesiredJob, Executor, ReplicaStatus } from './ports.ts';
import { replicaSpecs } from './replica-specs.ts';
import type { BoaService } from './service.ts';
import { failGeneration } from './replica-exits.ts';
import { takeReplicaOutcomes } from './replica-outcomes.ts';
import { StartDeadlines } from './start-deadlines.ts';
import { SentGpus } from './sent-gpus.ts';
import { stoppingEnded } from './stopping-gpus.ts';
import { OrderedStops } from './ordered-stops.ts';
import { expireLeases, guardedStep } from './job-steps.ts';

/** While replicas start or stop, the executor is asked again this soon instead of at the next tick. */
const FOLLOW_UP_MS = 1000;

/**
 * A database whose last tick is older than this may be behind the world (a restored snapshot): new jobs
 * with a command wait for the executor's first answer, a few seconds, as on a fresh one (found in review).
 */
const LONG_DOWN_MS = 10 * 60_000;

/**
 * The job lifecycle around the executor, called after each tick's decision (never inside it): which
 * replicas should exist (jobs with a workload and GPUs at their generation), what their exits mean
 * (rank 0 exiting 0: done; a failure: restart the generation with exponential backoff, after
 * maxRestarts: failed; stopped from outside: resume at once, not counted), and the lease of
 * self-launched jobs (silent past leaseSeconds: lost).
 */
export class Execution {
  private reconciling: Promise<void> | null = null;
  /** Jobs the last `desired` left out while they wait out a restart backoff (followed up until none). */
  private backingOff = 0;
  private followUp: NodeJS.Timeout | null = null;
  private followUpAt = 0;
  /** Asked for while a pass ran (a tick placed a job): one more pass once it ends. */
  private askedMeanwhile = false;
  private closed = false;
  /** The executor's last reconcile, measured apart from the tick's decision. */
  lastReconcileMs = 0;
  reconciles = 0;
  /** The last reconcile saw replicas starting or stopping (it is repeated every second until not). */
  settling = false;
  /**
   * Nodes where the executor last saw a replica not yet ended (stopping ones included): the node
   * reconciler removes a node only once its replicas have stopped with their grace period.
   */
  nodesWithReplicas: ReadonlySet<string> = new Set();
  /**
   * Until the executor's first answer, any node may hold a replica still stopping, from before a restart
   * (found in a crash trial: a restart whose first pod list failed terminated every node of a removal
   * waiting for them). For at most the grace period and a minute from the start: by then such a replica
   * was killed by its kubelet, and an executor that never answers must not keep idle nodes paid.
   */
  private readonly unknownUntil: number;
  /**
   * Called with the nodes whose last replica has just ended (between ticks): the scheduler removes a
   * node waiting for them now rather than at the next tick, so it is not paid for a tick longer.
   */
  onNodesFreed: ((nodes: ReadonlySet<string>) => void) | undefined;
  /** Called when a replica boa was stopping has ended (its GPUs are free for a job waiting on them). */
  onStoppingEnded: (() => void) | undefined;
  /** Each executed job's replicas at its current generation, built once per generation, not per tick. */
  private readonly specs = new Map<number, DesiredJob>();
  /**
   * The generation each job was let start at once its restart backoff ended: a clock stepped back after
   * that must not hold the job back again, stopping a running generation (found in review).
   */
  private readonly backoffEnded = new Map<number, number>();
  /** The GPUs each replica sent to the executor was given, for those it is stopping (sent-gpus.ts). */
  private readonly sentGpus = new SentGpus();
  /** Stops no answer has told yet (ordered-stops.ts), and passes started, to tell which answer follows. */
  readonly orderedStops = new OrderedStops();
  private passes = 0;
  /** Job tokens handed to replicas, derived once per job. */
  private readonly tokens = new Map<number, string>();
  private readonly startDeadlines = new StartDeadlines();
  private jobIdsKeptAbove = 0;
  /** The executor has answered a reconcile since the service started. */
  private answered = false;
  /** The executor's reconciles fail (another boa holds the namespace, say): since when, and the last error. */
  failing: { readonly message: string; readonly since: number } | undefined;
  /**
   * Jobs the executor still runs may be unknown to the store: no job was ever stored (a database started
   * afresh, or a first start), it was rolled back to a copy (jobs submitted since are not in it), or its
   * last tick is long past (a volume restored from a snapshot comes back with its own, older job ids).
   */
  private readonly mayNotKnowReplicas: boolean;

  constructor(
    private readonly service: BoaService,
    readonly executor: Executor | undefined,
  ) {
    const { repo, clock, rolledBack } = service.deps;
    const lastTick = repo.getSetting<number>('lastTickAt');
    const longPast = lastTick !== undefined && clock.now() - lastTick > LONG_DOWN_MS;
    this.mayNotKnowReplicas = repo.lastSubmittedAt() === undefined || !!rolledBack || longPast;
    this.unknownUntil = clock.now() + (service.deps.config.terminationGraceSeconds + 60) * 1000;
  }

  /** Boa stops `job`'s `generation`: its GPUs stay held until an answer tells (ordered-stops.ts). */
  stopOrdered(job: ServiceJob, generation: number, allocation: readonly string[]): void {
    if (!this.executor) return;
    this.orderedStops.order(job, generation, allocation, this.sent(job.id, generation), this.passes);
  }

  /** A pass sent the job's replicas of this generation to the executor (it may have started them). */
  sent(jobId: number, generation: number): boolean {
    return !!this.executor && this.specs.get(jobId)?.generation === generation;
  }

  /** A pass sent the job's replicas of its current generation (moved or narrowed, they hold its GPUs). */
  sentCurrent(jobId: number): boolean {
    const job = this.service.state.jobs.get(jobId);
    return job !== undefined && this.sent(jobId, job.generation);
  }

  /** Whether a replica may be running or stopping on this node (by allocation name). */
  mayHoldReplicas(node: string, now: number): boolean {
    if (this.nodesWithReplicas.has(node)) return true;
    return !!this.executor && !this.answered && now < this.unknownUntil;
  }

  /**
   * Why a job with a workload cannot be registered yet, or undefined. A database started afresh (or rolled
   * back to a copy) numbers jobs above those whose replicas the executor still holds (keepJobIdsAbove),
   * which it knows only once the executor has answered: until then a new job could take an old one's id,
   * and with it its pods (an old finished pod read as the new job done).
   */
  registrationBlocked(): string | undefined {
    if (!this.executor || this.answered || !this.mayNotKnowReplicas) return undefined;
    const why = this.failing ? ` (its last error: ${this.failing.message})` : '';
    return (
      `the executor has not answered since boa started${why}: on a database started afresh, rolled back to a copy or last ticked long ago (restored?), jobs with a ` +
      'command are numbered only once it has (an old job of the same id may still have replicas); ' +
      'fix what the error says, or try again in a few seconds'
    );
  }

  /** The tick's hook: leases now, the executor in the background (the tick never waits for it). */
  afterTick(now: number): void {
    expireLeases(this.service, now);
    this.reconcile();
  }

  /**
   * Starts a reconcile; one asked for while another is in flight runs when that one ends, so what a tick
   * decided meanwhile (a job given its GPUs) is not left to the next tick.
   */
  reconcile(): void {
    const executor = this.executor;
    if (!executor || this.closed) return;
    if (this.reconciling) {
      this.askedMeanwhile = true;
      return;
    }
    let started = 0;
    let pass = 0;
    let sent: readonly DesiredJob[] = [];
    // On the next turn of the event loop: the tick (and the API) never wait for an executor's own
    // synchronous work, such as the local executor spawning processes.
    this.reconciling = new Promise<void>((next) => setImmediate(next))
      .then(() => {
        started = performance.now();
        pass = ++this.passes;
        sent = this.desired(this.service.deps.clock.now());
        return executor.reconcile(sent);
      })
      .then((statuses) => {
        this.lastReconcileMs = performance.now() - started;
        this.reconciles += 1;
        this.answered = true;
        this.failing = undefined;
        const now = this.service.deps.clock.now();
        this.startDeadlines.taken(sent, now);
        // Replicas it could not make for no fault of their job's: their clocks start again.
        this.startDeadlines.restart(executor.outage?.() ?? [], now);
        this.keepJobIdsAbove(statuses);
        const told = this.orderedStops.answered(statuses, pass);
        this.settling = this.apply(statuses, told);
        if (this.settling || this.backingOff > 0) this.scheduleFollowUp(FOLLOW_UP_MS);
        // An exit is seen within seconds, not at the next tick: a failed job's GPUs are not held a tick
        // longer for each restart, and a finished job frees them sooner.
        else if (statuses.some((r) => r.phase === 'running'))
          this.scheduleFollowUp(this.service.deps.config.replicaCheckSeconds * 1000);
      })
      .catch((error: Error) => {
        const since = this.failing?.since ?? this.service.deps.clock.now();
        this.failing = { message: error.message, since };
        this.startDeadlines.executorFailed();
        this.service.deps.logger.warn(
          { event: 'executor_failed', error: error.message, stack: error.stack },
          'executor reconcile failed; retried next tick',
        );
      })
      .finally(() => {
        this.reconciling = null;
        if (!this.askedMeanwhile) return;
        this.askedMeanwhile = false;
        this.reconcile();
      });
  }

  /** Waits for a reconcile in flight (tests, shutdown). */
  async settle(): Promise<void> {
    while (this.reconciling) await this.reconciling;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.followUp) clearTimeout(this.followUp);
    await this.settle();
    await this.executor?.close();
  }

  /**
   * No new job takes the id of one whose replicas the executor still holds: after --init (or a database
   * removed by hand) the Kubernetes executor keeps old pods for their logs, and a new job of the same id
   * would take them for its own. Level-triggered: every answer raises the next id above what it shows.
   */
  private keepJobIdsAbove(statuses: readonly ReplicaStatus[]): void {
    const highest = statuses.reduce((max, r) => Math.max(max, r.jobId), 0);
    if (highest <= this.jobIdsKeptAbove) return;
    this.jobIdsKeptAbove = highest;
    if (this.service.deps.repo.keepJobIdsAbove(highest)) {
      this.service.deps.logger.warn(
        { event: 'job_ids.kept_above', highest },
        `the executor holds replicas of job ${highest}, which this database does not know (started afresh, or rolled back to a copy?): new job ids start above it`,
      );
    }
  }

  private scheduleFollowUp(delayMs: number): void {
    if (this.closed) return;
    // A sooner follow-up (a replica settling, 1 s) replaces a later one (the 5 s check), never the reverse.
    const at = performance.now() + delayMs;
    if (this.followUp && this.followUpAt <= at) return;
    if (this.followUp) clearTimeout(this.followUp);
    this.followUpAt = at;
    this.followUp = setTimeout(() => {
      this.followUp = null;
      this.reconcile();
    }, delayMs);
    this.followUp.unref();
  }

  /** Replicas that should exist now: one per node of each executed job's allocation, at its generation. */
  desired(now: number): DesiredJob[] {
    const out: DesiredJob[] = [];
    let backingOff = 0;
    for (const job of this.service.state.jobs.values()) {
      if (!job.workload || job.allocation.length === 0 || job.state !== 'running') continue;
      // Persisted with the failure, so a service restarted during the backoff waits it out too.
      if (job.restartNotBefore !== null && this.backoffEnded.get(job.id) !== job.generation) {
        if (now < job.restartNotBefore) {
          backingOff += 1;
          continue;
        }
        this.backoffEnded.set(job.id, job.generation);
      }
      let wanted = this.specs.get(job.id);
      if (wanted?.generation !== job.generation) {
        wanted = {
          jobId: job.id,
          generation: job.generation,
          replicas: replicaSpecs(job, this.tokenOf(job), publicUrl(this.service.deps.config), this.executor),
        };
        this.specs.set(job.id, wanted);
        this.sentGpus.sent(wanted);
      }
      out.push(wanted);
    }
    // Forget ended jobs' specs (a job's generation changes with every new allocation, so reuse is safe).
    if (this.specs.size > out.length * 2 + 64) {
      const live = new Set(out.map((j) => j.jobId));
      for (const id of this.specs.keys()) if (!live.has(id)) this.specs.delete(id);
      for (const id of this.backoffEnded.keys()) if (!live.has(id)) this.backoffEnded.delete(id);
    }
    this.backingOff = backingOff;
    return out;
  }

  private tokenOf(job: ServiceJob): string {
    let token = this.tokens.get(job.id);
    if (token === undefined && job.tokenSeed) {
      token = this.service.jobToken(job.tokenSeed);
      this.tokens.set(job.id, token);
    }
    return token ?? '';
  }

  /**
   * What the replicas' states mean for their jobs. Only the job's current generation counts, but for a
   * rank 0 of an older one that finished on its own: older ones are being stopped. Returns whether
   * anything is still starting or stopping, or a job's next generation is to start (a restart or a
   * resume).
   */
  private apply(statuses: readonly ReplicaStatus[], stopsTold = false): boolean {
    const before = this.nodesWithReplicas;
    this.nodesWithReplicas = new Set(
      statuses.filter((r) => r.phase !== 'succeeded' && r.phase !== 'failed').map((r) => r.node),
    );
    const freed = new Set([...before].filter((node) => !this.nodesWithReplicas.has(node)));
    if (freed.size > 0) this.onNodesFreed?.(freed);
    // The replicas not ended, with their GPUs, for the views (a job's replicas boa stops).
    const wasLive = this.service.state.liveReplicas;
    this.service.state.liveReplicas = this.sentGpus.live(statuses, this.specs.values());
    if (stopsTold || stoppingEnded(wasLive, this.service.state.liveReplicas, this.service.state.jobs))
      this.onStoppingEnded?.();
    let settling = false;
    const byJob = new Map<number, ReplicaStatus[]>();
    for (const status of statuses) {
      if (status.phase === 'starting' || status.phase === 'stopping') settling = true;
      const list = byJob.get(status.jobId) ?? [];
      list.push(status);
      byJob.set(status.jobId, list);
    }
    // Until the pool has been listed since the start, a replica failed, stopped from outside or late is
    // not judged: a node gone while boa was down explains it (its peers fail at the lost rendezvous, the
    // missing rank is held back, its node not listed: listed-nodes.ts), and the first tick, seeing the
    // node gone, moves the job, the old generation's ends no longer counting. Judged before, a node
    // removed by AWS cost the job a restart of its maxRestarts and a backoff (found in a restart trial).
    const judged = this.service.state.nodesListed;
    // What the states mean for each job, taken in the order they ended (replica-outcomes.ts).
    const outcomes = takeReplicaOutcomes(this.service, byJob, judged, (jobId) => this.tokens.delete(jobId));
    if (outcomes.settling) settling = true;
    const { config, clock } = this.service.deps;
    if (!judged) return settling;
    const late = this.startDeadlines.overdue(
      byJob,
      (id) => this.service.state.jobs.get(id),
      (id) => this.specs.get(id),
      outcomes.done,
      clock.now(),
      config.startTimeoutSeconds * 1000,
    );
    for (const { job, replica } of late)
      guardedStep(this.service, job.id, 'fail', () => failGeneration(this.service, job, replica));
    if (late.length > 0) settling = true;
    return settling;
  }
}
