import type { Logger } from 'pino';
import type { ClassProfile } from '../core/profile.ts';
import type { PlanRow, Repository } from '../store/repository.ts';
import type { PlanComputer } from './calculator/computer.ts';
import type { PlanInputs } from './calculator/compute.ts';
import { planDefect } from './calculator/plan-check.ts';

/**
 * Why a plan is asked for. A change of the budget, a profile or the node group makes a plan being
 * computed from the inputs before it wrong, not only older: it is not put in force (the run queued
 * for the change follows at once). Newer rates only refine one, and a burst of submissions would
 * otherwise discard plan after plan.
 */
const INVALIDATING = new Set(['budget', 'profile', 'node group']);

/** The first retry after a failed computation; each failure in a row doubles it, up to the timer's period. */
const FIRST_RETRY_MS = 60_000;

/**
 * Runs the width calculator off the tick: on a timer, and at once when the budget or a profile
 * changes. Requests arriving while a computation runs coalesce into one more run after it, so a
 * burst of changes costs at most two computations and the latest inputs always win.
 */
export class Planner {
  private running: Promise<PlanRow | undefined> | null = null;
  private queued: Promise<PlanRow | undefined> | null = null;
  private lastStartedAt = Number.NEGATIVE_INFINITY;
  /** The running computation's inputs were changed by a budget, profile or node group change. */
  private runningInvalidated = false;
  /** Ends the running computation when a change makes it wrong (computer.ts: its worker is ended). */
  private runningAbort: AbortController | null = null;
  lastError: string | undefined;
  /** Failed computations since the last plan: the first is logged as an error, its repeats quietly. */
  private failuresInRow = 0;
  /** Set by stop(): a computation the stop ends is not a failure, and none starts after it. */
  private stopped = false;
  /** When the timer tries again after a failed computation (undefined: no failure to retry). */
  private retryAt: number | undefined;
  /** When the computation running now started (undefined: none runs), for status: a hung one shows. */
  computingSince: number | undefined;

  constructor(
    private readonly deps: {
      repo: Repository;
      computer: PlanComputer;
      logger: Logger;
      now: () => number;
      /** A promise when reading them waits for a computation (the load's needs: load-needs.ts). */
      inputs: () => PlanInputs | undefined | Promise<PlanInputs | undefined>;
      onPlan: (row: PlanRow) => void;
      /** Counts a failed computation (the metrics' boa_plan_failures_total). */
      onFailure?: () => void;
      intervalMs: number;
    },
  ) {}

  /** Called every tick: starts a computation when the timer is due. Never waits for it. */
  maybeRun(): void {
    const now = this.deps.now();
    // A clock stepped back (NTP, a VM restored) would otherwise silence the timer for the step's length.
    const due = now - this.lastStartedAt >= this.deps.intervalMs || now < this.lastStartedAt;
    // A failure soon after a budget change (the store busy a moment) left the old budget's plan in
    // force until the timer's next run, a quarter of an hour (found in review).
    const retry = this.retryAt !== undefined && now >= this.retryAt;
    if (!this.running && (due || retry)) void this.request(due ? 'timer' : 'retry');
  }

  /** Asks for a plan; resolves with a plan computed from inputs read after this call. */
  request(reason: string): Promise<PlanRow | undefined> {
    if (!this.running) return this.start(reason);
    if (INVALIDATING.has(reason)) {
      this.runningInvalidated = true;
      // Its plan would not be put in force: a hung one held the change's plan up to its timeout, 5 minutes.
      this.runningAbort?.abort();
    }
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.start(reason);
    });
    return this.queued;
  }

  /** The service stops: nothing more is computed, and what the stop interrupts is dropped quietly. */
  stop(): void {
    this.stopped = true;
  }

  /** The service is stopping (stop was called): computers close, and what they had fails quietly. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Waits for computations in flight or queued (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running || this.queued) await (this.queued ?? this.running);
  }

  private start(reason: string): Promise<PlanRow | undefined> {
    this.lastStartedAt = this.deps.now();
    this.computingSince = this.lastStartedAt;
    this.runningInvalidated = false;
    const abort = new AbortController();
    this.runningAbort = abort;
    const run: Promise<PlanRow | undefined> = this.run(reason, abort.signal).finally(() => {
      if (this.running === run) {
        this.running = null;
        this.computingSince = undefined;
      }
    });
    this.running = run;
    return run;
  }

  private async run(reason: string, signal: AbortSignal): Promise<PlanRow | undefined> {
    if (this.stopped) return undefined;
    try {
      // Inside the try: reading the inputs reads the store, and a timer's run is awaited by no one, so a
      // throw here would be an unhandled rejection that stops the service.
      const read = this.deps.inputs();
      // Read now when they are at hand: the computation starts within this call, as callers expect.
      const inputs = read instanceof Promise ? await read : read;
      if (!inputs) return undefined;
      const result = await this.deps.computer.compute(inputs, signal);
      const defect = planDefect(inputs, result);
      if (defect) throw new Error(`the plan it answered is unusable (${defect})`);
      if (this.runningInvalidated) {
        // Found in review: one made for budget 90 landed after a cut to 9 and steered every job.
        this.deps.logger.info(
          { event: 'plan.superseded', reason, budget: inputs.budget },
          'plan computed from inputs changed meanwhile; not put in force (the next one follows)',
        );
        return undefined;
      }
      const row = this.deps.repo.insertPlan({
        computedAt: this.deps.now(),
        solver: inputs.solver,
        budget: inputs.budget,
        planningBudget: inputs.planningBudget,
        minFeasibleBudget: result.minFeasibleBudget,
        predictedAvgJctSeconds: result.value.avgJctSeconds,
        predictedGpuHoursPerHour: result.value.gpuHoursPerHour,
        plan: result.plan,
        inputs: {
          ...inputs,
          classes: inputs.classes.map(summariseClass),
          clampedToMinimum: result.clampedToMinimum,
        },
        solveMs: result.solveMs,
      });
      if (this.failuresInRow > 0) {
        this.deps.logger.info(
          { event: 'plan_recovered', failures: this.failuresInRow, lastError: this.lastError },
          `plan computed after ${this.failuresInRow} failed computation${this.failuresInRow === 1 ? '' : 's'}`,
        );
      }
      this.failuresInRow = 0;
      this.retryAt = undefined;
      this.lastError = undefined;
      this.deps.logger.info(
        {
          event: 'plan',
          reason,
          planId: row.id,
          budget: inputs.budget,
          planningBudget: inputs.planningBudget,
          predictedAvgJctSeconds: row.predictedAvgJctSeconds,
          solveMs: row.solveMs,
        },
        'plan computed',
      );
      this.deps.onPlan(row);
      return row;
    } catch (error) {
      const message = (error as Error).message;
      if (signal.aborted) {
        this.deps.logger.info(
          { event: 'plan.superseded', reason, error: message },
          'plan computation ended: a change made its inputs wrong (the next one follows)',
        );
        return undefined;
      }
      if (this.stopped) {
        this.deps.logger.info(
          { event: 'plan_abandoned', reason, error: message },
          'the stop ended a plan computation; the next start plans again',
        );
        return undefined;
      }
      // A calculator that keeps failing fails at every timer and every submission that moves the rates:
      // one error for the operator, not one a run (found in review); status's plannerError holds it.
      const repeated = message === this.lastError;
      this.lastError = message;
      this.failuresInRow += 1;
      const backoff = FIRST_RETRY_MS * 2 ** Math.min(this.failuresInRow - 1, 20);
      this.retryAt = this.deps.now() + Math.min(this.deps.intervalMs, backoff);
      this.deps.onFailure?.();
      const entry = { event: 'plan_failed', reason, error: message, failuresInRow: this.failuresInRow };
      if (repeated) this.deps.logger.debug(entry, 'plan failed again, as before');
      else this.deps.logger.error({ ...entry, stack: (error as Error).stack }, 'plan failed');
      return undefined;
    }
  }
}

/** Stored inputs keep the work estimates per epoch; the speedup tables are in the class profiles. */
function summariseClass(c: ClassProfile) {
  return {
    name: c.name,
    weight: c.weight,
    rescaleSeconds: c.rescaleSeconds,
    workSeconds: c.epochs.map((e) => e.workSeconds),
  };
}
