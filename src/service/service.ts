import { bookedByClass } from './gpu-time.ts';
import { HeartbeatHold, nodeDrainMs } from './heartbeat-hold.ts';
import { JobLeases } from './job-leases.ts';
import type { Logger } from 'pino';
import type { ClassProfile } from '../core/profile.ts';
import { ledgerPrunedBefore } from '../store/ledger-pruned.ts';
import { type JobState, type Repository } from '../store/repository.ts';
import type { HistoryImportRow } from '../store/history.ts';
import { currentSpendCeiling, ledgerAverages, overheadRatioNow, paidLoadNeeds, setBudget } from './budget.ts';
import { loadNeeds, loadNeedsAsOf, planInputsWhenAsked } from './load-needs.ts';
import type { PlanInputs } from './calculator/compute.ts';
import type { PlanComputer } from './calculator/computer.ts';
import { deleteClass, putClass } from './class-operations.ts';
import type { ServiceConfig } from './config.ts';
import { ignoredStartingBudget } from './config-budget.ts';
import { notFound, ServiceError } from './errors.ts';
import { Execution } from './execution.ts';
import {
  deleteHistory,
  type HistoryImported,
  type HistoryInput,
  importHistory,
  loadHistory,
} from './history.ts';
import { checkCheckpointClaim } from './claim-check.ts';
import { finishJob, type Registered, registerJob } from './job-operations.ts';
import { registerJobOnce } from './idempotency.ts';
import { type ServiceJob, jobFromRow } from './jobs.ts';
import type { Averages } from './ledger.ts';
import {
  adoptPlan,
  followPlan,
  estimatedClasses,
  estimatedRates,
  loadRates,
  planInputs,
} from './plan-inputs.ts';
import { Planner } from './planner.ts';
import { expectedGpus, intervalPlan } from './demand.ts';
import { reportProgress } from './progress.ts';
import type { ReportSequence } from './report-sequence.ts';
import type { SpendCeiling } from '../core/spend-ceiling.ts';
import type { Clock, Executor, MetricsSink, NodePool, Workload } from './ports.ts';
import { type BudgetSetting, ServiceState } from './state.ts';
import { deriveJobToken, tokenMatchesHash } from './tokens.ts';
import { instanceTypeSince, type WorkSample, withInstanceType } from './work-samples.ts';

export interface ServiceDeps {
  readonly config: ServiceConfig;
  readonly repo: Repository;
  readonly clock: Clock;
  readonly pool: NodePool;
  readonly metrics: MetricsSink;
  readonly computer: PlanComputer;
  /**
   * Where the frontier and the views' load needs are computed (load-needs.ts, frontier.ts): a worker
   * of their own, so a plan never waits behind a frontier (a minute for the largest profiles).
   * Absent: the plans' computer.
   */
  readonly queries?: PlanComputer;
  readonly logger: Logger;
  /** Runs the jobs that come with a workload (local processes or Kubernetes pods); absent: none run. */
  readonly executor?: Executor;
  /** Key the tokens of executed jobs are derived from (see deriveJobToken). */
  readonly jobTokenKey?: Buffer;
  /** The store was rolled back to a copy at this start: jobs since the copy may still have replicas. */
  readonly rolledBack?: boolean;
}

/** How a job ended: the API's complete/cancel, or the executor's and the lease's verdicts. */
export type EndState = Extract<JobState, 'done' | 'cancelled' | 'failed' | 'lost'>;

/**
 * The boa service's state and operations: jobs, classes, budget, plans and the ledger. The scheduling
 * tick (scheduler.ts) and the API (src/api) work through it. Every change is one store transaction.
 */
export class BoaService {
  readonly state = new ServiceState();
  /** Self-launched jobs' leases (job-leases.ts). */
  readonly leases: JobLeases;
  readonly planner: Planner;
  /** Runs executed jobs' replicas and judges their exits and self-launched jobs' leases (execution.ts). */
  readonly execution: Execution;
  /** The budget guard's size, held while boa's heartbeat does not reach CloudWatch (heartbeat-hold.ts). */
  readonly heartbeat: HeartbeatHold;

  constructor(readonly deps: ServiceDeps) {
    this.leases = new JobLeases({ ...deps, leaseSeconds: deps.config.leaseSeconds });
    this.execution = new Execution(this, deps.executor);
    this.heartbeat = new HeartbeatHold(
      {
        guardMinutes: deps.config.guardMinutes,
        deployBudget: deps.config.budget,
        drainMs: nodeDrainMs(deps.config),
        tickMs: deps.config.tickSeconds * 1000,
      },
      deps.repo,
      deps.clock.now(),
      deps.logger,
    );
    this.planner = new Planner({
      repo: deps.repo,
      computer: deps.computer,
      logger: deps.logger,
      now: () => deps.clock.now(),
      inputs: () => planInputsWhenAsked(this),
      onPlan: (row) => adoptPlan(this, row),
      onFailure: () => void (this.state.counters.planFailures += 1),
      intervalMs: deps.config.calculatorMinutes * 60_000,
    });
  }

  /** Loads the stored state; seeds classes from the default profiles and the budget from config. */
  init(defaultClasses: readonly ClassProfile[]): void {
    const { repo, clock, config } = this.deps;
    const now = clock.now();
    this.leases.booted(now);
    const s = this.state;
    const priorChanges: Array<{ name: string; old: number; new: number }> = [];
    repo.transaction(() => {
      if (repo.listClasses().length === 0) {
        for (const c of defaultClasses) repo.putClass(c, config.priorRates[c.name] ?? 0, now);
      }
      // The config's priorRates are the declared state: one edited after the first start replaces the
      // stored prior (the first tick replans with it); classes it does not name keep theirs.
      for (const c of repo.listClasses()) {
        const configured = config.priorRates[c.name];
        if (configured === undefined || configured === c.priorRatePerHour) continue;
        repo.putClass(c.profile, configured, now);
        priorChanges.push({ name: c.name, old: c.priorRatePerHour, new: configured });
      }
      if (repo.getSetting('startedAt') === undefined) repo.putSetting('startedAt', now, now);
      if (repo.getSetting('budget') === undefined && config.budget !== undefined) {
        repo.putSetting('budget', { gpuHoursPerHour: config.budget, setAt: now }, now);
      }
    });
    // An operator who edits --budget after the first start would otherwise think it took effect.
    const ignored = ignoredStartingBudget(config, repo.getSetting<BudgetSetting>('budget')?.gpuHoursPerHour);
    if (ignored)
      this.deps.logger.warn({ event: 'config_budget_ignored', configured: config.budget }, ignored);
    const classNames = new Set(repo.listClasses().map((c) => c.name));
    const unmatched = Object.keys(config.priorRates).filter((name) => !classNames.has(name));
    if (unmatched.length > 0) {
      // Likely a misspelt class: say so now rather than plan it at 0 without a word.
      this.deps.logger.warn(
        { event: 'class_prior_unmatched', names: unmatched, classes: [...classNames] },
        `config priorRates names ${unmatched.join(', ')}, which the service has no class for ` +
          `(classes: ${[...classNames].join(', ')}); it applies when a class of that name is put`,
      );
    }
    for (const change of priorChanges) {
      this.deps.logger.info(
        { event: 'class_prior_from_config', ...change },
        `class ${change.name}: prior rate ${change.old}/h replaced by the config's ${change.new}/h`,
      );
    }
    const kept = repo.getSetting<Record<string, WorkSample[][]>>('workSamples') ?? {};
    // Samples stored before their instance type was kept are this start's type's, stored so at once: a
    // later start on another type must not take them for its own.
    const { samples, changed } = withInstanceType(kept, config.instanceType);
    if (changed) repo.putSetting('workSamples', samples, now);
    s.instanceTypeSince = instanceTypeSince(repo, config.instanceType, now);
    for (const c of repo.listClasses()) {
      // Samples of another shape are a replaced class's, stored before a PUT also stored its samples.
      const stored = samples[c.name];
      s.classes.set(c.name, {
        profile: c.profile,
        priorRatePerHour: c.priorRatePerHour,
        workSamples: stored?.length === c.profile.epochs.length ? stored : c.profile.epochs.map(() => []),
      });
    }
    s.startedAt = repo.getSetting<number>('startedAt') ?? now;
    s.ledgerSince = Math.max(s.startedAt, ledgerPrunedBefore(repo, s.startedAt, now));
    loadHistory(this);
    s.budget = repo.getSetting<BudgetSetting>('budget');
    for (const row of repo.activeJobs()) s.jobs.set(row.id, jobFromRow(row));
    s.lastSubmittedAt = repo.lastSubmittedAt();
    const plan = repo.latestPlan();
    if (plan) adoptPlan(this, plan);
    // The first sample after a restart (its downtime) keeps the plan's expectation like every other:
    // without it the demand ratio reads that stretch as on plan.
    s.intervalPlan = intervalPlan(this, 0);
    s.lastTickAt = repo.getSetting<number>('lastTickAt');
    // Allocated time resumes where the ledger ends: a completion after the last tick wrote a sample
    // beyond lastTickAt, and resuming from lastTickAt would count that stretch twice.
    s.allocatedFrom = Math.max(
      s.lastTickAt ?? now,
      repo.ledger.lastAllocationTo() ?? Number.NEGATIVE_INFINITY,
    );
    // The plan's widths, as the ticks booked them: the downtime's sample leaves out the idle fill's GPUs too.
    s.allocatedGpus = [...s.jobs.values()].reduce((sum, j) => sum + j.allocation.length - j.idleFillGpus, 0);
    s.allocatedByClass = bookedByClass(s.jobs.values());
  }

  // ---- plans (plan-inputs.ts) ----

  /** Inputs for the calculator from the current estimates, or undefined when there is no budget. */
  planInputs(): PlanInputs | undefined {
    return planInputs(this);
  }

  estimatedRates(now = this.deps.clock.now()): Record<string, number> {
    return estimatedRates(this, now);
  }

  /** The estimated arrival rates plus the jobs waiting now, spread over one budget window. */
  loadRates(now = this.deps.clock.now()): Record<string, number> {
    return loadRates(this, now);
  }

  /** Class profiles with each epoch's work blended with what finished epochs showed. */
  estimatedClasses(): ClassProfile[] {
    return estimatedClasses(this);
  }

  /** Gives a job its widths from the current plan (plan-inputs.ts followPlan); true when they changed. */
  followPlan(job: ServiceJob): boolean {
    return followPlan(this, job);
  }

  // ---- budget (budget.ts) ----

  /** Sets the budget (422 only below one job of the cheapest class; below the load: a warning). */
  setBudget(gpuHoursPerHour: number): {
    budget: BudgetSetting;
    minFeasibleBudget: number;
    warning: string | null;
  } {
    return setBudget(this, gpuHoursPerHour);
  }

  /** The most GPUs and nodes the budget window allows from now on (core/spend-ceiling.ts). */
  spendCeiling(now = this.deps.clock.now()): SpendCeiling | undefined {
    return currentSpendCeiling(this, now);
  }

  /** GPU-hours per hour the current load would need allocated (the cheapest plan for loadRates); cached a minute. */
  loadNeeds(now = this.deps.clock.now()): number {
    return loadNeeds(this, now);
  }

  /** When the figure loadNeeds answers was computed: a moment ago while the worker computes it anew. */
  loadNeedsAsOf(now = this.deps.clock.now()): number {
    return loadNeedsAsOf(this, now);
  }

  /** The window's paid GPU-hours per allocated one, 1 to 2 (budget.ts). */
  overheadRatio(now = this.deps.clock.now()): number {
    return overheadRatioNow(this, now);
  }

  /** loadNeeds as a budget: at the window's paid/allocated overhead. */
  paidLoadNeeds(now = this.deps.clock.now()): number {
    return paidLoadNeeds(this, now);
  }

  /** Paid and allocated time-averages over [from, to], the open allocation interval included. */
  ledgerAverages(from: number, to: number): Averages {
    return ledgerAverages(this, from, to);
  }

  // ---- classes (class-operations.ts) ----

  putClass(profile: ClassProfile, priorRatePerHour: number | undefined): void {
    putClass(this, profile, priorRatePerHour);
  }

  /** Deletes a class no active job belongs to; the last class stays (a restart would reseed defaults). */
  deleteClass(name: string): void {
    deleteClass(this, name);
  }

  // ---- arrival history (history.ts) ----

  /** Imports submissions from before the service's record for the rate estimator (one transaction). */
  importHistory(input: HistoryInput): HistoryImported {
    return importHistory(this, input);
  }

  deleteHistory(id: number): HistoryImportRow {
    return deleteHistory(this, id);
  }

  // ---- jobs (job-operations.ts, progress.ts) ----

  /** With an Idempotency-Key, a submission seen before answers with its job instead (idempotency.ts). */
  registerJob(
    className: string,
    name: string | undefined,
    workload?: Workload,
    idempotencyKey?: string,
  ): Registered {
    if (idempotencyKey === undefined) return registerJob(this, className, name, workload);
    return registerJobOnce(this, { class: className, name, workload }, idempotencyKey);
  }

  /**
   * POST /v1/jobs: registerJob once the executor has checked what only it can read (the checkpoint
   * volume claim, claim-check.ts), so nothing is stored for a job whose replicas could not start.
   */
  async submitJob(
    className: string,
    name: string | undefined,
    workload?: Workload,
    idempotencyKey?: string,
  ): Promise<Registered> {
    await checkCheckpointClaim(this, className, workload, idempotencyKey);
    return this.registerJob(className, name, workload, idempotencyKey);
  }

  /** The token an executed job's replicas get (derived again from its seed; never stored). */
  jobToken(seed: string): string {
    const key = this.deps.jobTokenKey;
    if (!key) throw new Error('jobTokenKey is not configured: executed jobs need it');
    return deriveJobToken(key, seed);
  }

  /** The job, checked against its token (or the operator's, which the API checks before). */
  job(id: number, token?: string): ServiceJob {
    const stored = this.state.jobs.has(id) ? undefined : this.deps.repo.getJob(id);
    const job = this.state.jobs.get(id) ?? (stored ? jobFromRow(stored) : undefined);
    if (!job) throw notFound(`job ${id}`);
    if (token !== undefined && !tokenMatchesHash(token, job.tokenHash)) {
      throw new ServiceError(401, 'unauthorized', 'this token is not the job token of job ' + id);
    }
    return job;
  }

  reportProgress(
    id: number,
    statEpoch: number,
    token?: string,
    workDoneSeconds?: number,
    generation?: number,
    sequence?: ReportSequence,
  ): ServiceJob {
    const job = this.activeJob(id, token);
    // Renewed once the report is taken: a refused one changes nothing stored (found in review).
    const reported = reportProgress(this, job, statEpoch, workDoneSeconds, generation, sequence);
    this.leases.touchAfterStored(job);
    return reported;
  }

  /** Ends a job: its GPUs are freed at once; `failure` says why an executed or lost job ended. */
  finishJob(
    id: number,
    state: EndState,
    token?: string,
    failure?: { exitCode: number | null; reason: string },
    endedAt?: number,
  ): ServiceJob {
    return finishJob(this, this.job(id, token), state, failure, endedAt);
  }

  private activeJob(id: number, token?: string): ServiceJob {
    const job = this.job(id, token);
    if (job.state !== 'waiting' && job.state !== 'running') {
      throw new ServiceError(409, 'not_active', `job ${id} is ${job.state}`);
    }
    return job;
  }

  /** Closes the current allocation interval into a ledger sample (inside the caller's transaction). */
  flushAllocation(now: number): void {
    const { allocatedFrom, allocatedGpus, allocatedByClass, intervalPlan } = this.state;
    this.deps.repo.ledger.recordAllocation(
      allocatedFrom,
      now,
      allocatedGpus,
      expectedGpus(intervalPlan, allocatedGpus),
      allocatedByClass,
    );
    // Never backwards: after the clock steps back, the stretch up to where the ledger's samples end is
    // booked already, and an open interval starting before it would count it twice in every average
    // that adds the open interval to the samples (ledgerAverages, the window's split by class).
    this.state.allocatedFrom = Math.max(now, allocatedFrom);
  }
}
