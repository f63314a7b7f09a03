/**
 * What a tick publishes (the metrics sink: CloudWatch on AWS): spend, nodes, jobs, and how the budget
 * is held. Apart from the scheduler, which decides; this only reads what it decided.
 */
import type { MetricDatum } from './ports.ts';
import { knownPaidGpus } from './paid-now.ts';
import type { TickDecision } from './tick-decision.ts';
import type { BoaService } from './service.ts';
import { windowPaidView } from './views.ts';

/** `ceilingGpus`: the tick's spend ceiling; `nodeMetrics`: the node reconciler's own. */
export function tickMetrics(
  service: BoaService,
  decision: TickDecision,
  now: number,
  ceilingGpus: number,
  nodeMetrics: readonly MetricDatum[],
): MetricDatum[] {
  const { state } = service;
  // The window as GET /v1/budget and /metrics read it, so the overspend alarm judges the paid average by
  // the budgets in force over the window, as the dashboard does: one rule for over budget.
  const window = windowPaidView(service, now);
  const paidNow = knownPaidGpus(state, service.deps.repo.ledger);
  const running = [...state.jobs.values()].filter((j) => j.state === 'running').length;
  return [
    ...heldNodeGroup(service, decision),
    { name: 'BudgetGpuHoursPerHour', value: state.budget?.gpuHoursPerHour ?? 0, unit: 'None' },
    { name: 'PaidGpuHoursPerHour', value: paidNow, unit: 'None' },
    { name: 'AllocatedGpuHoursPerHour', value: decision.allocatedGpus, unit: 'None' },
    { name: 'PaidGpuHoursPerHourAverage', value: window.paidGpuHoursPerHour, unit: 'None' },
    // 0 before a budget is set, as BudgetGpuHoursPerHour.
    { name: 'WindowBudgetGpuHoursPerHour', value: window.budgetGpuHoursPerHour ?? 0, unit: 'None' },
    { name: 'JobsRunning', value: running, unit: 'Count' },
    { name: 'JobsWaiting', value: state.jobs.size - running, unit: 'Count' },
    { name: 'PredictedAvgJctSeconds', value: state.plan?.row.predictedAvgJctSeconds ?? 0, unit: 'Seconds' },
    ...nodeMetrics,
    ...budgetMetrics(service, now, ceilingGpus),
  ];
}

/**
 * The Heartbeat and the node counts, once the pool has answered a listing since the start. Until then
 * boa resizes nothing and its node list is boot's empty one: a Heartbeat kept the silence alarm and the
 * budget guard quiet while nobody held the node group (a budget cut enforced by nothing), and the counts
 * read 0 nodes while they ran (found in review). Published every tick otherwise, budget or not.
 */
function heldNodeGroup(service: BoaService, decision: TickDecision): MetricDatum[] {
  const { state } = service;
  if (!state.nodesListed) return [];
  return [
    { name: 'Heartbeat', value: 1, unit: 'Count' },
    { name: 'DesiredNodes', value: decision.desiredNodes, unit: 'Count' },
    { name: 'ActualNodes', value: state.nodes.length, unit: 'Count' },
  ];
}

/** The budget's control: the load's needed budget, the ceiling, jobs waiting for the budget. */
function budgetMetrics(service: BoaService, now: number, ceilingGpus: number): MetricDatum[] {
  const { state } = service;
  if (!state.budget) return [];
  let queued = 0;
  for (const job of state.jobs.values()) if (job.state === 'waiting' && job.queuedForBudget) queued++;
  return [
    { name: 'LoadNeedsGpuHoursPerHour', value: service.loadNeeds(now), unit: 'None' },
    { name: 'SpendCeilingGpus', value: ceilingGpus, unit: 'None' },
    { name: 'JobsQueuedForBudget', value: queued, unit: 'Count' },
  ];
}

/**
 * Sends a tick's metrics without waiting; a failure is counted and logged. Only a batch with the
 * Heartbeat is one the budget guard counts (none before the pool has been listed).
 */
export function publishTickMetrics(service: BoaService, metrics: MetricDatum[], now: number): void {
  const { state, deps } = service;
  const published = state.budget?.gpuHoursPerHour;
  const beats = metrics.some((datum) => datum.name === 'Heartbeat');
  void deps.metrics.put(metrics, now).then(
    () => {
      if (beats) service.heartbeat.delivered(now, published);
    },
    (error: Error) => {
      state.counters.metricsPublishFailures += 1;
      deps.logger.warn({ event: 'metrics_failed', error: error.message }, 'metrics not published');
    },
  );
}
