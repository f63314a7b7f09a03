import type { Averages } from './ledger.ts';
import { nodesOf, type ServiceJob } from './jobs.ts';
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;
const HOURS_PER_MONTH = 730;

function round(value: number, digits = 4): number {
  return Number(value.toFixed(digits));
}

function averagesView(a: Averages) {
  return {
    hours: round(a.hours, 3),
    paidGpuHoursPerHour: round(a.paidGpuHoursPerHour),
    allocatedGpuHoursPerHour: round(a.allocatedGpuHoursPerHour),
  };
}

/** What the operator sees for the budget: the target and how spending tracks it. */
export function budgetView(service: BoaService) {
  const { state, deps } = service;
  const now = deps.clock.now();
  const { config } = deps;
  const gpuPrice = config.nodePricePerHour / config.gpusPerNode;
  const budget = state.budget;
  const window = service.ledgerAverages(
    Math.max(now - config.budgetWindowHours * HOUR, state.startedAt),
    now,
  );
  const sinceSet = budget ? service.ledgerAverages(budget.setAt, now) : undefined;
  return {
    gpuHoursPerHour: budget?.gpuHoursPerHour ?? null,
    setAt: budget ? new Date(budget.setAt).toISOString() : null,
    window: { windowHours: config.budgetWindowHours, ...averagesView(window) },
    sinceSet: sinceSet ? averagesView(sinceSet) : null,
    dollarsPerMonth: budget ? round(budget.gpuHoursPerHour * gpuPrice * HOURS_PER_MONTH, 2) : null,
    paidDollarsPerMonth: round(window.paidGpuHoursPerHour * gpuPrice * HOURS_PER_MONTH, 2),
    instanceType: config.instanceType,
    nodePricePerHour: config.nodePricePerHour,
  };
}

export function jobView(job: ServiceJob) {
  return {
    id: job.id,
    name: job.name,
    class: job.className,
    state: job.state,
    submittedAt: new Date(job.submittedAt).toISOString(),
    startedAt: job.startedAt === null ? null : new Date(job.startedAt).toISOString(),
    finishedAt: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
    statEpoch: job.statEpoch,
    workDoneSeconds: job.workDoneSeconds,
    planId: job.planId,
    widths: job.widths,
    width: job.width,
    generation: job.generation,
  };
}

export function allocationView(job: ServiceJob) {
  return {
    jobId: job.id,
    state: job.state,
    width: job.width,
    nodes: nodesOf(job.allocation),
    generation: job.generation,
    statEpoch: job.statEpoch,
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
    predicted: {
      avgJctSeconds: round(row.predictedAvgJctSeconds, 1),
      gpuHoursPerHour: round(row.predictedGpuHoursPerHour),
    },
    solveMs: round(row.solveMs, 3),
    widths: plan.plan,
    inputs: row.inputs,
  };
}

export function statusView(service: BoaService) {
  const { state, deps } = service;
  const counts = deps.repo.countJobsByState();
  const allocated = [...state.jobs.values()].reduce((sum, j) => sum + j.allocation.length, 0);
  const last = deps.repo.lastResize();
  return {
    cloud: deps.pool.kind,
    nodeGroup: {
      minSize: state.group?.minSize ?? null,
      maxSize: state.group?.maxSize ?? null,
      desiredNodes: last?.requested ?? state.group?.desiredSize ?? null,
      lastResize: last
        ? { target: last.target, status: last.status, at: new Date(last.at).toISOString() }
        : null,
      actualNodes: state.nodes.length,
      readyNodes: state.nodes.filter((n) => n.ready).length,
    },
    gpus: { allocated, paid: state.nodes.reduce((sum, n) => sum + n.gpus, 0) },
    jobs: counts,
    planId: state.plan?.row.id ?? null,
    plannerError: service.planner.lastError ?? null,
    lastTickAt: state.lastTickAt === undefined ? null : new Date(state.lastTickAt).toISOString(),
    lastTickMs: round(state.lastTickMs, 3),
  };
}
