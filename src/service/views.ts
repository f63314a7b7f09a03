import { BOUNDS } from '../api/bounds.ts';
import { backWithinBudgetView } from './back-within.ts';
import { belowBudgetNow } from './below-budget.ts';
import { budgetAllowed, ceilingLookaheadHours, heldToGpuHoursPerHour, promisedGpuHours } from './budget.ts';
import { type Averages, averagesFromTotals } from './ledger.ts';
import { gpuMsAt } from './gpu-time.ts';
import type { ServiceJob } from './jobs.ts';
import { stoppingView } from './stopping-replicas.ts';
import { heldByView, type WaitContext, waitingFor } from './waiting-for.ts';
import { ledgerKeptMs } from './retention.ts';
import { clusterShape } from './plan-inputs.ts';
import { allocatedByClass } from './class-spend.ts';
import { failedRankOf } from './replica-exits.ts';
import type { BoaService } from './service.ts';
import {
  creditNow,
  firstDayRateNow,
  planCap,
  planningFactor,
  rateConfidenceNow,
  rateRiseNow,
  rateWindowNow,
} from './plan-inputs.ts';

const HOUR = 3_600_000;
const HOURS_PER_MONTH = 730;

export function round(value: number, digits = 4): number {
  return Number(value.toFixed(digits));
}

/** What one GPU-hour costs (the node's price over its GPUs); null when no price is known for the type. */
export function gpuPricePerHour(config: { nodePricePerHour: number | null; gpusPerNode: number }) {
  return config.nodePricePerHour === null ? null : config.nodePricePerHour / config.gpusPerNode;
}

/** A job's booked GPU-hours to `now` (gpu-time.ts); null when not kept. */
function gpuHoursOf(job: ServiceJob, now: number): number | null {
  const ms = gpuMsAt(job, now);
  return ms === null ? null : round(ms / HOUR);
}

function averagesView(a: Averages) {
  return {
    hours: round(a.hours, 3),
    paidGpuHoursPerHour: round(a.paidGpuHoursPerHour),
    allocatedGpuHoursPerHour: round(a.allocatedGpuHoursPerHour),
  };
}

/** Paid and allocated averages over the budget window's hours so far (from the service's start). */
function windowAverages(service: BoaService, now: number): Averages {
  return service.ledgerAverages(windowStart(service, now), now);
}

/** Where the budget window begins: its hours before now, or where the ledger is whole from if later. */
function windowStart(service: BoaService, now: number): number {
  return Math.max(now - service.deps.config.budgetWindowHours * HOUR, service.state.ledgerSince);
}

/**
 * The window's paid average and what it is held to, without the allocated average (a sum over every
 * allocation sample of the window, 86,400 rows at 1 s ticks): what the scheduler publishes every tick.
 */
export function windowPaidView(service: BoaService, now: number) {
  const from = windowStart(service, now);
  const paidOnly = averagesFromTotals(service.deps.repo.ledger.paidGpuMs(from, now), 0, now - from);
  const { paidGpuHoursPerHour, budgetGpuHoursPerHour } = windowView(service, now, paidOnly);
  return { paidGpuHoursPerHour, budgetGpuHoursPerHour };
}

/**
 * The budget window's averages and what its paid average is held to, as GET /v1/budget, the dashboard,
 * boa budget get and /metrics all show them (one rule for "over budget").
 */
export function windowView(service: BoaService, now: number, window = windowAverages(service, now)) {
  const budget = service.state.budget;
  return {
    windowHours: service.deps.config.budgetWindowHours,
    ...averagesView(window),
    // What the window's paid average is held to: each budget for the hours it was in force. After a
    // cut the paid average is above the new budget for a day with nothing overspent (the dashboard
    // flagged it as over).
    budgetGpuHoursPerHour: budget
      ? round(
          window.hours > 0
            ? promisedGpuHours(budget, now, window.hours) / window.hours
            : budget.gpuHoursPerHour,
        )
      : null,
  };
}

/** The window's allocated GPU-hours by class (class-spend.ts), as GPU-hours, per hour and share. */
function classSpendView(service: BoaService, now: number, window: Averages) {
  const spanMs = window.hours * HOUR;
  const total = window.allocatedGpuHoursPerHour * spanMs;
  return allocatedByClass(service, windowStart(service, now), now, total).map(({ className, gpuMs }) => ({
    className,
    gpuHours: round(gpuMs / HOUR),
    gpuHoursPerHour: spanMs > 0 ? round(gpuMs / spanMs) : 0,
    share: total > 0 ? round(gpuMs / total) : 0,
  }));
}

/** What the operator sees for the budget: the target and how spending tracks it. */
export function budgetView(service: BoaService) {
  const { state, deps } = service;
  const now = deps.clock.now();
  const { config } = deps;
  // No price known for the instance type: no $ figure rather than another type's.
  const gpuPrice = gpuPricePerHour(config);
  const perMonth = (gpuHoursPerHour: number) =>
    gpuPrice === null ? null : round(gpuHoursPerHour * gpuPrice * HOURS_PER_MONTH, 2);
  const budget = state.budget;
  const window = windowAverages(service, now);
  // Since the budget was set, but not before the ledger rows retention keeps: pruned time would read as
  // time nothing was paid or allocated (the average's `hours` is the span it covers).
  const sinceSet = budget
    ? service.ledgerAverages(Math.max(budget.setAt, now - ledgerKeptMs(config), state.ledgerSince), now)
    : undefined;
  return {
    gpuHoursPerHour: budget?.gpuHoursPerHour ?? null,
    setAt: budget ? new Date(budget.setAt).toISOString() : null,
    window: {
      ...windowView(service, now, window),
      backWithinBudget: backWithinBudgetView(service, now),
      allocatedByClass: classSpendView(service, now, window),
    },
    // Held to as the window is (100000 showed beside the window's 92.66 for one budget: a trial).
    sinceSet:
      sinceSet && budget
        ? { ...averagesView(sinceSet), budgetGpuHoursPerHour: heldToGpuHoursPerHour(budget) }
        : null,
    // What it can spend: above the node group's maximum, the rest can never be paid (257 showed the
    // month's dollars of 257 GPUs beside a window held to 256: a newcomer's review).
    dollarsPerMonth: budget ? perMonth(heldToGpuHoursPerHour(budget)) : null,
    paidDollarsPerMonth: perMonth(window.paidGpuHoursPerHour),
    instanceType: config.instanceType,
    nodePricePerHour: config.nodePricePerHour,
    // The most GPUs boa can ever pay for at once: a budget above it holds nothing back (the CLI asks).
    maxGpus: clusterShape(service).maxWidth ?? null,
    // What PUT /v1/budget takes, so the CLI asks "cut the budget to 2?" only of a budget it would set
    // (found in review: it asked, then the service refused 2 as below the smallest, and 1e9 as too big).
    accepted: { min: budgetAllowed(service).leastPaid, max: BOUNDS.budget },
    control: budget ? controlView(service, now) : null,
  };
}

/**
 * How the budget is being held now: the ceiling on paid GPUs the window allows, the debt (GPU-hours
 * paid above the budget in the window the ceiling counts, its last 23 of 24 hours; negative is room),
 * the paid/allocated overhead the plan corrects for, jobs waiting for the budget, and the budget the
 * current load would need.
 */
function controlView(service: BoaService, now: number) {
  const ceiling = service.spendCeiling(now);
  const inputs = service.state.plan?.row;
  const cap = planCap(service, now, ceiling);
  const credit = creditNow(service, now, ceiling);
  return {
    ceilingGpus: ceiling ? round(ceiling.gpus, 2) : null,
    ceilingNodes: ceiling?.nodes ?? null,
    // The budget guard's size, held while boa's heartbeat does not reach CloudWatch (heartbeat-hold.ts).
    heartbeatHoldNodes: service.heartbeat.holding?.nodes ?? null,
    debtGpuHours: ceiling ? round(ceiling.debtGpuHours, 3) : null,
    horizonHours: service.deps.config.budgetHorizonHours,
    lookaheadHours: ceilingLookaheadHours(service.deps.config),
    planningBudget: inputs ? round(inputs.planningBudget) : null,
    warmupFactor: round(planningFactor(service, now), 3),
    planCapGpuHoursPerHour: Number.isFinite(cap) ? round(cap, 3) : null,
    creditGpuHoursPerHour: round(credit, 3),
    rateConfidenceFactor: round(rateConfidenceNow(service, now), 3),
    rateRiseFactor: round(rateRiseNow(service, now), 3),
    // The plan in force's (service/demand.ts): what its budget was divided by; 1 when off.
    demandRatio: round((inputs?.inputs as { demandRatio?: number } | undefined)?.demandRatio ?? 1, 3),
    firstDayJobsPerHour: round(firstDayRateNow(service, now), 4),
    rateWindow: rateWindowView(service, now),
    queuedForBudget: queuedForBudget(service),
    queueOrder: service.deps.config.queueOrder,
    draining: service.state.draining,
    fillingToBudget: service.state.fillingToBudget,
    loadNeedsGpuHoursPerHour: round(service.loadNeeds(now), 3),
    loadNeedsPaidGpuHoursPerHour: round(service.paidLoadNeeds(now), 3),
    loadNeedsAsOf: new Date(service.loadNeedsAsOf(now)).toISOString(),
    belowBudget: belowBudgetView(service),
  };
}

function belowBudgetView(service: BoaService) {
  const below = belowBudgetNow(service);
  return {
    gpus: round(below.gpus, 3),
    waitingGpus: round(below.waitingGpus, 3),
    usableGpus: round(below.usableGpus, 3),
    unusableGpus: round(below.unusableGpus, 3),
  };
}

/** How much of the rate window the rates rest on, as GET /v1/budget and GET /v1/frontier give it. */
export function rateWindowView(service: BoaService, now: number) {
  const { observedHours, windowHours, plannedAtZero } = rateWindowNow(service, now);
  return { observedHours: round(observedHours, 3), windowHours, plannedAtZero };
}

export function queuedForBudget(service: BoaService): number {
  let n = 0;
  for (const job of service.state.jobs.values()) if (job.state === 'waiting' && job.queuedForBudget) n++;
  return n;
}

/**
 * A job as the API shows it; `waits` (waitContext of the service's state) tells why a waiting job
 * waits, `now` a restart backoff still running from one that is over (shown null then, not as a time
 * gone by).
 */
export function jobView(job: ServiceJob, waits: WaitContext, now: number, gpuPrice: number | null = null) {
  const gpuHours = gpuHoursOf(job, now);
  return {
    id: job.id,
    name: job.name,
    class: job.className,
    state: job.state,
    waitingFor: waitingFor(job, waits),
    heldBy: heldByView(job, waits),
    queuePlace: job.state === 'waiting' && job.queuedForBudget ? (job.budgetQueuePlace ?? null) : null,
    // Why a running job has fewer GPUs than its plan, when the budget is why (else nodes or placement).
    narrowedBy: job.state === 'running' && job.narrowedByBudget ? ('budget' as const) : null,
    submittedAt: new Date(job.submittedAt).toISOString(),
    startedAt: job.startedAt === null ? null : new Date(job.startedAt).toISOString(),
    finishedAt: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
    statEpoch: job.statEpoch,
    // It moved into this epoch since the last tick (a report): `width` is what that tick gave the epoch
    // before, the plan's width for this one comes at the next tick. The note said "nodes booting or
    // placement" with every node ready (a newcomer). Epoch 0's clock restarts at a report too: not it.
    epochAfterLastTick:
      job.state === 'running' &&
      job.statEpoch > 0 &&
      job.epochStartedAt !== null &&
      waits.lastTickAt !== undefined &&
      job.epochStartedAt > waits.lastTickAt,
    workDoneSeconds: job.workDoneSeconds,
    // A job done without a report ("rank 0 exiting 0 is the job done") read as done at epoch 1 of 8
    // with no hint that it never said how far it got (found by a newcomer). Recorded, not inferred from
    // the epoch and its clock: a job rescaled before its first report, done within epoch 0, read as
    // never having reported (found in review). Jobs from before migration 0010 read as reported.
    reportedProgress: job.lastReportAt !== null,
    lastReportAt: job.lastReportAt === null ? null : new Date(job.lastReportAt).toISOString(),
    planId: job.planId,
    widths: job.widths,
    width: job.width,
    // Of `width`, the GPUs the idle fill lent beyond the plan's: run, not booked against the budget.
    lentGpus: job.idleFillGpus,
    // Its share of the ledger's allocated GPU-hours (lent GPUs left out, as the budget leaves them out).
    gpuHours,
    // At the node's price per GPU-hour, when one is known (BOA_NODE_PRICE_PER_HOUR or the type's).
    dollars: gpuHours === null || gpuPrice === null ? null : round(gpuHours * gpuPrice, 2),
    generation: job.generation,
    workload: job.workload,
    restarts: job.restarts,
    exitCode: job.exitCode,
    failureReason: job.failureReason,
    // Which rank's log holds the failure's own words (a failure on rank 1 sent people to rank 0's).
    failedRank: failedRankOf(job.failureReason),
    restartNotBefore:
      job.restartNotBefore === null || job.restartNotBefore <= now
        ? null
        : new Date(job.restartNotBefore).toISOString(),
    // Replicas boa is stopping that still run (their grace before SIGKILL), and the GPUs they still hold:
    // a cancelled job read "0 GPUs" while its process ran on for the whole grace (found in review).
    stopping: stoppingView(waits.stopping?.get(job.id)),
  };
}

export function planView(service: BoaService) {
  const plan = service.state.plan;
  if (!plan) return null;
  const { row } = plan;
  return {
    id: row.id,
    computedAt: new Date(row.computedAt).toISOString(),
    solver: row.solver,
    budget: row.budget,
    planningBudget: round(row.planningBudget),
    minFeasibleBudget: round(row.minFeasibleBudget),
    // As a budget (paid), as frontier, status and PUT /v1/budget give it: the figure a budget is compared with.
    minFeasiblePaidBudget: round(row.minFeasibleBudget * service.overheadRatio()),
    predicted: {
      avgJctSeconds: round(row.predictedAvgJctSeconds, 1),
      gpuHoursPerHour: round(row.predictedGpuHoursPerHour),
    },
    solveMs: round(row.solveMs, 3),
    widths: plan.plan,
    inputs: row.inputs,
  };
}
