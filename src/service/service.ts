import type { Logger } from 'pino';
import type { MixedPlan } from '../core/plan.ts';
import type { ClassProfile } from '../core/profile.ts';
import type { JobState, PlanRow, Repository } from '../store/repository.ts';
import { chooseShare } from './admission.ts';
import { checkBudget, type PlanInputs } from './calculator/compute.ts';
import type { PlanComputer } from './calculator/computer.ts';
import type { ServiceConfig } from './config.ts';
import { notFound, ServiceError } from './errors.ts';
import { Execution } from './execution.ts';
import { blendWork, estimateRates, workFromDuration } from './estimators.ts';
import { type ServiceJob, jobFromRow, plannedWidth } from './jobs.ts';
import { type Averages, averagesFromTotals, overheadRatio } from './ledger.ts';
import { Planner } from './planner.ts';
import { judgeWorkSample } from './trust.ts';
import { type SpendCeiling, spendCeiling } from './spend-guard.ts';
import type { Clock, Executor, MetricsSink, NodePool, Workload } from './ports.ts';
import { type BudgetSetting, MAX_WORK_SAMPLES, ServiceState } from './state.ts';
import { deriveJobToken, hashToken, newToken, tokenMatchesHash } from './tokens.ts';

export interface ServiceDeps {
  readonly config: ServiceConfig;
  readonly repo: Repository;
  readonly clock: Clock;
  readonly pool: NodePool;
  readonly metrics: MetricsSink;
  readonly computer: PlanComputer;
  readonly logger: Logger;
  /** Runs the jobs that come with a workload (local processes or Kubernetes pods); absent: none run. */
  readonly executor?: Executor;
  /** Key the tokens of executed jobs are derived from (see deriveJobToken). */
  readonly jobTokenKey?: Buffer;
}

/** How a job ended: the API's complete/cancel, or the executor's and the lease's verdicts. */
export type EndState = Extract<JobState, 'done' | 'cancelled' | 'failed' | 'lost'>;

const HOUR = 3_600_000;

/** The fewest GPUs any class can run a job on: a budget below this cannot run anything. */
function smallestJobGpus(classes: readonly ClassProfile[]): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (const c of classes) {
    for (const e of c.epochs) {
      for (const width of Object.keys(e.speedup)) smallest = Math.min(smallest, Number(width));
    }
  }
  return Number.isFinite(smallest) ? smallest : 1;
}

/**
 * The boa service's state and operations: jobs, classes, budget, plans and the ledger. The scheduling
 * tick (scheduler.ts) and the API (src/api) work through it. Every change is one store transaction.
 */
export class BoaService {
  readonly state = new ServiceState();
  /** When this process loaded the state: leases count from here at the earliest. */
  bootedAt = 0;
  readonly planner: Planner;
  /** Runs executed jobs' replicas and judges their exits and self-launched jobs' leases (execution.ts). */
  readonly execution: Execution;

  constructor(readonly deps: ServiceDeps) {
    this.execution = new Execution(this, deps.executor);
    this.planner = new Planner({
      repo: deps.repo,
      computer: deps.computer,
      logger: deps.logger,
      now: () => deps.clock.now(),
      inputs: () => this.planInputs(),
      onPlan: (row) => this.adoptPlan(row),
      intervalMs: deps.config.calculatorMinutes * 60_000,
    });
  }

  /** Loads the stored state; seeds classes from the default profiles and the budget from config. */
  init(defaultClasses: readonly ClassProfile[]): void {
    const { repo, clock, config } = this.deps;
    const now = clock.now();
    this.bootedAt = now;
    const s = this.state;
    repo.transaction(() => {
      if (repo.listClasses().length === 0) {
        for (const c of defaultClasses) repo.putClass(c, config.priorRates[c.name] ?? 0, now);
      }
      if (repo.getSetting('startedAt') === undefined) repo.putSetting('startedAt', now, now);
      if (repo.getSetting('budget') === undefined && config.budget !== undefined) {
        repo.putSetting('budget', { gpuHoursPerHour: config.budget, setAt: now }, now);
      }
    });
    const samples = repo.getSetting<Record<string, number[][]>>('workSamples') ?? {};
    for (const c of repo.listClasses()) {
      s.classes.set(c.name, {
        profile: c.profile,
        priorRatePerHour: c.priorRatePerHour,
        workSamples: samples[c.name] ?? c.profile.epochs.map(() => []),
      });
    }
    s.startedAt = repo.getSetting<number>('startedAt') ?? now;
    s.budget = repo.getSetting<BudgetSetting>('budget');
    for (const row of repo.activeJobs()) s.jobs.set(row.id, jobFromRow(row));
    const plan = repo.latestPlan();
    if (plan) this.adoptPlan(plan);
    s.lastTickAt = repo.getSetting<number>('lastTickAt');
    // Allocated time resumes where the ledger ends: a completion after the last tick wrote a sample
    // beyond lastTickAt, and resuming from lastTickAt would count that stretch twice.
    s.allocatedFrom = Math.max(s.lastTickAt ?? now, repo.lastAllocationTo() ?? Number.NEGATIVE_INFINITY);
    s.allocatedGpus = [...s.jobs.values()].reduce((sum, j) => sum + j.allocation.length, 0);
  }

  // ---- plans ----

  /** Inputs for the calculator from the current estimates, or undefined when there is no budget. */
  planInputs(): PlanInputs | undefined {
    const budget = this.state.budget;
    if (!budget) return undefined;
    const now = this.deps.clock.now();
    const window = this.deps.config.budgetWindowHours * HOUR;
    const ratio = overheadRatio(this.ledgerAverages(Math.max(now - window, this.state.startedAt), now));
    return {
      classes: this.estimatedClasses(),
      ratesPerHour: this.loadRates(now),
      budget: budget.gpuHoursPerHour,
      planningBudget: budget.gpuHoursPerHour / ratio,
      solver: this.deps.config.solver,
      gpusPerNode: this.deps.config.gpusPerNode,
    };
  }

  estimatedRates(now = this.deps.clock.now()): Record<string, number> {
    const { config, repo } = this.deps;
    const since = now - config.rateWindowHours * HOUR;
    return estimateRates(
      [...this.state.classes.values()].map((c) => ({
        name: c.profile.name,
        priorRatePerHour: c.priorRatePerHour,
      })),
      repo.submissionsSince(since),
      {
        now,
        windowHours: config.rateWindowHours,
        priorWeightHours: config.priorWeightHours,
        observedSince: this.state.startedAt,
      },
    );
  }

  /**
   * The load to plan for: the estimated arrival rates plus the jobs waiting now, as if they arrived
   * evenly over one budget window. A burst then weighs as the backlog it is (and shrinks as it drains),
   * and under a backlog the plan moves to the cheaper widths that serve more jobs within the budget.
   */
  loadRates(now = this.deps.clock.now()): Record<string, number> {
    const rates = { ...this.estimatedRates(now) };
    const windowHours = this.deps.config.budgetWindowHours;
    for (const job of this.state.jobs.values()) {
      if (job.state === 'waiting') rates[job.className] = (rates[job.className] ?? 0) + 1 / windowHours;
    }
    return rates;
  }

  /** Class profiles with each epoch's work blended with what finished epochs showed. */
  estimatedClasses(): ClassProfile[] {
    return [...this.state.classes.values()].map(({ profile, workSamples }) => ({
      ...profile,
      epochs: profile.epochs.map((e, j) => ({
        ...e,
        workSeconds: blendWork(e.workSeconds, workSamples[j] ?? []),
      })),
    }));
  }

  private adoptPlan(row: PlanRow): void {
    this.state.plan = { row, plan: row.plan as MixedPlan };
  }

  /** Gives a job its widths from the current plan's share for its class, chosen at admission. */
  admit(job: ServiceJob): boolean {
    const current = this.state.plan;
    const shares = current?.plan[job.className];
    if (!current || !shares) return false;
    const key = `${current.row.id}/${job.className}`;
    const counts = this.state.admitted.get(key) ?? shares.map(() => 0);
    const index = chooseShare(shares, counts);
    counts[index] = (counts[index] ?? 0) + 1;
    this.state.admitted.set(key, counts);
    job.planId = current.row.id;
    job.widths = [...(shares[index]?.widths ?? [])];
    return true;
  }

  /** Re-plans when a class's load (loadRates) moved by more than a quarter since the plan was made. */
  private replanIfRatesMoved(): void {
    const planned = (this.state.plan?.row.inputs as { ratesPerHour?: Record<string, number> } | undefined)
      ?.ratesPerHour;
    if (!planned || !this.state.budget) return;
    const now = this.loadRates();
    const moved = Object.entries(now).some(([name, rate]) => {
      const before = planned[name] ?? 0;
      return Math.abs(rate - before) > 0.25 * Math.max(before, 1e-3);
    });
    if (moved) void this.planner.request('rates');
  }

  // ---- budget ----

  /**
   * Sets the budget. Refused (422) only below what one job of the cheapest class needs to run at all
   * (its narrowest width, in GPUs); a budget below the minimum for the current estimates is accepted
   * with a warning: the plan uses the cheapest widths and the jobs the budget cannot serve queue.
   */
  setBudget(gpuHoursPerHour: number): {
    budget: BudgetSetting;
    minFeasibleBudget: number;
    warning: string | null;
  } {
    if (!Number.isFinite(gpuHoursPerHour) || gpuHoursPerHour <= 0) {
      throw new ServiceError(400, 'invalid', 'gpuHoursPerHour must be a positive number', 'gpuHoursPerHour');
    }
    const classes = this.estimatedClasses();
    const smallest = smallestJobGpus(classes);
    if (gpuHoursPerHour < smallest) {
      throw new ServiceError(
        422,
        'budget_below_minimum',
        `budget ${gpuHoursPerHour} GPU-hours/hour cannot keep even one job running: the cheapest class ` +
          `needs at least ${smallest} GPU(s). The smallest accepted budget is ${smallest}.`,
        'gpuHoursPerHour',
        { minFeasibleBudget: smallest },
      );
    }
    const minFeasibleBudget = checkBudget(
      { classes, ratesPerHour: this.loadRates(), gpusPerNode: this.deps.config.gpusPerNode },
      0,
      false,
    );
    const warning =
      gpuHoursPerHour < minFeasibleBudget * (1 - 1e-9)
        ? `budget ${gpuHoursPerHour} is below ${minFeasibleBudget.toFixed(3)} GPU-hours/hour, the minimum ` +
          'for the estimated arrivals: jobs will queue (oldest first) until the budget allows them'
        : null;
    const now = this.deps.clock.now();
    const budget = { gpuHoursPerHour, setAt: now };
    this.deps.repo.putSetting('budget', budget, now);
    this.state.budget = budget;
    this.deps.logger.info({ event: 'budget_set', gpuHoursPerHour, warning }, 'budget set');
    void this.planner.request('budget');
    return { budget, minFeasibleBudget, warning };
  }

  /**
   * The most GPUs and nodes the budget window allows from now on (spend-guard.ts). The window starts
   * when the budget was set (a new budget is a new promise) or 'budgetWindowHours' ago.
   */
  spendCeiling(now = this.deps.clock.now()): SpendCeiling | undefined {
    const budget = this.state.budget;
    if (!budget) return undefined;
    const { config, repo } = this.deps;
    const from = Math.max(now - config.budgetWindowHours * HOUR, this.state.startedAt, budget.setAt);
    return spendCeiling({
      budgetGpuHoursPerHour: budget.gpuHoursPerHour,
      paidGpuHours: repo.ledgerTotals(from, now).paidGpuMs / HOUR,
      elapsedHours: Math.max(0, now - from) / HOUR,
      horizonHours: config.budgetHorizonHours,
      gpusPerNode: config.gpusPerNode,
      slack: config.budgetSlack,
      heldNodes: this.state.nodes.length,
    });
  }

  /**
   * The budget the current load would need: the cheapest plan for the load (loadRates: the estimated
   * arrivals plus the jobs waiting now, cleared within one budget window). Recomputed once a minute.
   */
  loadNeeds(now = this.deps.clock.now()): number {
    const cached = this.state.loadNeeds;
    if (cached && now - cached.at < 60_000) return cached.gpuHoursPerHour;
    const gpuHoursPerHour = checkBudget(
      {
        classes: this.estimatedClasses(),
        ratesPerHour: this.loadRates(now),
        gpusPerNode: this.deps.config.gpusPerNode,
      },
      0,
      false,
    );
    this.state.loadNeeds = { at: now, gpuHoursPerHour };
    return gpuHoursPerHour;
  }

  /** Paid and allocated time-averages over [from, to], the open allocation interval included. */
  ledgerAverages(from: number, to: number): Averages {
    const totals = this.deps.repo.ledgerTotals(from, to);
    const open = this.state.allocatedGpus * Math.max(0, to - Math.max(from, this.state.allocatedFrom));
    return averagesFromTotals(totals.paidGpuMs, totals.allocatedGpuMs + open, to - from);
  }

  // ---- classes ----

  putClass(profile: ClassProfile, priorRatePerHour: number | undefined): void {
    const now = this.deps.clock.now();
    const existing = this.state.classes.get(profile.name);
    const prior =
      priorRatePerHour ?? existing?.priorRatePerHour ?? this.deps.config.priorRates[profile.name] ?? 0;
    this.deps.repo.putClass(profile, prior, now);
    const sameShape = existing && existing.profile.epochs.length === profile.epochs.length;
    this.state.classes.set(profile.name, {
      profile,
      priorRatePerHour: prior,
      workSamples: sameShape ? existing.workSamples : profile.epochs.map(() => []),
    });
    this.deps.logger.info(
      { event: 'class_put', name: profile.name, epochs: profile.epochs.length },
      'class saved',
    );
    void this.planner.request('profile');
  }

  /** Deletes a class no active job belongs to; the last class stays (a restart would reseed defaults). */
  deleteClass(name: string): void {
    const s = this.state;
    if (!s.classes.has(name)) throw notFound(`class ${name}`);
    const active = [...s.jobs.values()].filter(
      (j) => j.className === name && (j.state === 'waiting' || j.state === 'running'),
    );
    if (active.length > 0) {
      throw new ServiceError(
        409,
        'class_in_use',
        `class ${name} has ${active.length} active job(s) (${active
          .slice(0, 5)
          .map((j) => j.id)
          .join(', ')}${active.length > 5 ? ', ...' : ''}); cancel or finish them first`,
        'name',
      );
    }
    if (s.classes.size === 1) {
      throw new ServiceError(
        409,
        'last_class',
        `class ${name} is the only class; put another one first`,
        'name',
      );
    }
    this.deps.repo.deleteClass(name);
    s.classes.delete(name);
    this.deps.logger.info({ event: 'class_deleted', name }, 'class deleted');
    void this.planner.request('profile');
  }

  // ---- jobs ----

  registerJob(
    className: string,
    name: string | undefined,
    workload?: Workload,
  ): { job: ServiceJob; token: string } {
    if (!this.state.classes.has(className)) {
      throw new ServiceError(
        400,
        'unknown_class',
        `unknown class "${className}"; known classes: ${[...this.state.classes.keys()].join(', ')}`,
        'class',
      );
    }
    if (workload) this.checkWorkload(workload);
    const tokenSeed = workload ? newToken() : null;
    const token = tokenSeed === null ? newToken() : this.jobToken(tokenSeed);
    const now = this.deps.clock.now();
    const row = this.deps.repo.transaction(() => {
      const inserted = this.deps.repo.insertJob({
        name: name ?? className,
        className,
        tokenHash: hashToken(token),
        state: 'waiting',
        submittedAt: now,
        allocation: [],
        workload: workload ?? null,
        tokenSeed,
        lastSeenAt: now,
      });
      const job = jobFromRow(inserted);
      if (this.admit(job)) this.deps.repo.saveJobState(job);
      return job;
    });
    this.state.jobs.set(row.id, row);
    this.deps.logger.info({ event: 'job_registered', jobId: row.id, class: className }, 'job registered');
    this.replanIfRatesMoved();
    return { job: row, token };
  }

  private checkWorkload(workload: Workload): void {
    const { executor } = this.deps;
    if (!executor) {
      throw new ServiceError(
        422,
        'no_executor',
        'this service runs no executor, so it cannot run a workload; submit without one',
        'workload',
      );
    }
    const problem = executor.checkWorkload?.(workload);
    if (problem) throw new ServiceError(422, 'workload_not_runnable', problem.message, problem.field);
  }

  /** The token an executed job's replicas get (derived again from its seed; never stored). */
  jobToken(seed: string): string {
    const key = this.deps.jobTokenKey;
    if (!key) throw new Error('jobTokenKey is not configured: executed jobs need it');
    return deriveJobToken(key, seed);
  }

  /** Renews a self-launched job's lease: in memory at once, in the store at most every tenth of it. */
  touch(job: ServiceJob): void {
    const now = this.deps.clock.now();
    this.seenAt.set(job.id, now);
    if (job.lastSeenAt === null || now - job.lastSeenAt >= this.deps.config.leaseSeconds * 100) {
      job.lastSeenAt = now;
      this.deps.repo.touchJob(job.id, now);
    }
  }

  /** Each job's last poll or report; the stored lastSeenAt lags it by at most a tenth of the lease. */
  readonly seenAt = new Map<number, number>();

  /** When a self-launched job was last heard of (a restart counts as hearing of every job). */
  lastSeen(job: ServiceJob): number {
    return Math.max(
      this.seenAt.get(job.id) ?? Number.NEGATIVE_INFINITY,
      job.lastSeenAt ?? Number.NEGATIVE_INFINITY,
      job.startedAt ?? Number.NEGATIVE_INFINITY,
      this.bootedAt,
    );
  }

  /** The job, checked against its token (or the operator's, which the API checks before). */
  job(id: number, token?: string): ServiceJob {
    const job = this.state.jobs.get(id) ?? this.storedJob(id);
    if (!job) throw notFound(`job ${id}`);
    if (token !== undefined && !tokenMatchesHash(token, job.tokenHash)) {
      throw new ServiceError(401, 'unauthorized', 'this token is not the job token of job ' + id);
    }
    return job;
  }

  private storedJob(id: number): ServiceJob | undefined {
    const row = this.deps.repo.getJob(id);
    return row ? jobFromRow(row) : undefined;
  }

  reportProgress(id: number, statEpoch: number, token?: string, workDoneSeconds?: number): ServiceJob {
    const job = this.activeJob(id, token);
    this.touch(job);
    if (workDoneSeconds !== undefined && !(Number.isFinite(workDoneSeconds) && workDoneSeconds >= 0)) {
      throw new ServiceError(
        400,
        'invalid',
        'workDoneSeconds must be a number >= 0 (1-GPU seconds of work done in the current statistical epoch)',
        'workDoneSeconds',
      );
    }
    const cls = this.state.classes.get(job.className);
    const epochs = cls?.profile.epochs.length ?? 1;
    if (!Number.isInteger(statEpoch) || statEpoch < 0 || statEpoch >= epochs) {
      throw new ServiceError(
        400,
        'invalid',
        `statEpoch must be an integer from 0 to ${epochs - 1} for class ${job.className}`,
        'statEpoch',
      );
    }
    if (statEpoch < job.statEpoch) {
      throw new ServiceError(
        409,
        'epoch_regressed',
        `job ${id} is already in statistical epoch ${job.statEpoch}; epochs only advance`,
        'statEpoch',
      );
    }
    if (statEpoch === job.statEpoch) {
      if (workDoneSeconds === undefined || workDoneSeconds === job.workDoneSeconds) return job;
      job.workDoneSeconds = workDoneSeconds;
      this.deps.repo.transaction(() => this.deps.repo.saveJobState(job));
      return job;
    }
    const now = this.deps.clock.now();
    this.recordWorkSample(job, now);
    job.statEpoch = statEpoch;
    job.workDoneSeconds = workDoneSeconds ?? 0;
    job.epochStartedAt = job.allocation.length > 0 ? now : null;
    job.epochGeneration = job.generation;
    this.deps.repo.transaction(() => {
      this.deps.repo.saveJobState(job);
      this.persistWorkSamples(now);
    });
    return job;
  }

  /** A clean epoch (one allocation throughout, at the planned width) tells us its 1-GPU work. */
  private recordWorkSample(job: ServiceJob, now: number): void {
    const cls = this.state.classes.get(job.className);
    if (!cls || job.epochStartedAt === null || job.generation !== job.epochGeneration) return;
    const width = job.allocation.length;
    const epoch = cls.profile.epochs[job.statEpoch];
    const speedup = epoch?.speedup[String(width)];
    if (!epoch || !speedup || width !== plannedWidth(job)) return;
    // Only the first epoch begins with a (re)start: a later one whose width changed is not clean.
    const rescale = job.statEpoch === 0 ? cls.profile.rescaleSeconds : 0;
    const sample = workFromDuration((now - job.epochStartedAt) / 1000, rescale, speedup);
    const verdict = judgeWorkSample(epoch.workSeconds, sample);
    if (!verdict.use) {
      this.deps.logger.warn(
        {
          event: 'work_sample_dropped',
          jobId: job.id,
          class: job.className,
          statEpoch: job.statEpoch,
          workSeconds: sample,
          reason: verdict.reason,
        },
        'work sample ignored',
      );
      return;
    }
    const samples = (cls.workSamples[job.statEpoch] ??= []);
    samples.push(verdict.workSeconds);
    if (samples.length > MAX_WORK_SAMPLES) samples.shift();
  }

  private persistWorkSamples(now: number): void {
    const all = Object.fromEntries([...this.state.classes].map(([name, c]) => [name, c.workSamples]));
    this.deps.repo.putSetting('workSamples', all, now);
  }

  /** Ends a job: its GPUs are freed at once; `failure` says why an executed or lost job ended. */
  finishJob(
    id: number,
    state: EndState,
    token?: string,
    failure?: { exitCode: number | null; reason: string },
  ): ServiceJob {
    const job = this.job(id, token);
    if (job.state !== 'waiting' && job.state !== 'running') {
      if (job.state === state) return job;
      throw new ServiceError(409, 'already_finished', `job ${id} is already ${job.state}`);
    }
    const now = this.deps.clock.now();
    if (state === 'done') this.recordWorkSample(job, now);
    this.deps.repo.transaction(() => {
      this.flushAllocation(now);
      this.state.allocatedGpus -= job.allocation.length;
      job.state = state;
      job.finishedAt = now;
      job.allocation = [];
      job.width = 0;
      job.generation += 1;
      if (failure) {
        job.exitCode = failure.exitCode;
        job.failureReason = failure.reason;
      }
      this.deps.repo.saveJobState(job);
      if (state === 'done') this.persistWorkSamples(now);
    });
    this.state.jobs.delete(id);
    this.seenAt.delete(id);
    this.deps.logger.info({ event: `job_${state}`, jobId: id, ...failure }, `job ${state}`);
    return job;
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
    this.deps.repo.recordAllocation(this.state.allocatedFrom, now, this.state.allocatedGpus);
    this.state.allocatedFrom = now;
  }
}
