import { Counter, Gauge, Registry } from 'prom-client';
import type { OpsCounters } from '../service/ops-counters.ts';
import type { BoaService } from '../service/service.ts';
import { statusView } from '../service/status-view.ts';
import { windowView } from '../service/views.ts';
import { belowBudgetNow } from '../service/below-budget.ts';
import { nodeGroupMetrics } from './prometheus-nodes.ts';

/**
 * Gauges read from the service when scraped, so they are never stale. A value that does not exist yet
 * (no budget, no plan) is NaN, not 0: a budget of 0 or a predicted JCT of 0 would read as real, and
 * an alert on `paid > budget` would fire before a budget is set ("Avoid missing metrics" in
 * Prometheus's instrumentation practices: 0, or NaN if 0 would be misleading).
 */
export function prometheusRegistry(service: BoaService): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, collect: (g: Gauge) => void, labelNames: string[] = []) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        collect(this);
      },
    });
  gauge('boa_budget_gpu_hours_per_hour', 'Budget target (NaN while none is set)', (g) =>
    g.set(service.state.budget?.gpuHoursPerHour ?? NaN),
  );
  // The budget window as GET /v1/budget and the dashboard show it: paid above the window's budget (each
  // budget for the hours it was in force) is what the dashboard marks over, so one rule holds everywhere.
  const window = () => windowView(service, service.deps.clock.now());
  gauge(
    'boa_paid_gpu_hours_per_hour',
    'Paid GPU-hours per hour, time-average over the budget window (GET /v1/budget window)',
    (g) => g.set(window().paidGpuHoursPerHour),
  );
  gauge(
    'boa_allocated_gpu_hours_per_hour',
    'Allocated GPU-hours per hour, time-average over the same window',
    (g) => g.set(window().allocatedGpuHoursPerHour),
  );
  gauge(
    'boa_window_budget_gpu_hours_per_hour',
    'The budgets in force over the budget window, time-averaged: what the paid average is held to (NaN while none is set)',
    (g) => g.set(window().budgetGpuHoursPerHour ?? NaN),
  );
  gauge(
    'boa_nodes',
    'Nodes in the pool: ready excludes those boa is removing, counted as removing (listed nodes; actual, ready and removing NaN until the pool answers a listing after a start)',
    (g) => {
      const s = statusView(service);
      g.set({ kind: 'actual' }, s.nodeGroup.actualNodes ?? NaN);
      g.set({ kind: 'ready' }, s.nodeGroup.readyNodes ?? NaN);
      g.set({ kind: 'removing' }, s.nodeGroup.removingNodes ?? NaN);
      g.set({ kind: 'desired' }, s.nodeGroup.desiredNodes ?? NaN);
    },
    ['kind'],
  );
  gauge(
    'boa_jobs',
    'Jobs by state',
    (g) => {
      for (const [state, n] of Object.entries(service.deps.repo.countJobsByState())) g.set({ state }, n);
    },
    ['state'],
  );
  gauge(
    'boa_plan_predicted_avg_jct_seconds',
    'Predicted average JCT of the current plan (NaN while there is none)',
    (g) => g.set(service.state.plan?.row.predictedAvgJctSeconds ?? NaN),
  );
  gauge('boa_tick_duration_seconds', 'Compute time of the last scheduling tick', (g) =>
    g.set(service.state.lastTickMs / 1000),
  );
  // What an operator alerts on besides the averages: a scheduler that stopped ticking, GPUs paid now,
  // and jobs the budget holds back (what /v1/status shows).
  gauge(
    'boa_last_tick_timestamp_seconds',
    'When the last scheduling tick ran (Unix seconds; 0 before the first)',
    (g) => g.set((service.state.lastTickAt ?? 0) / 1000),
  );
  gauge(
    'boa_gpus',
    "GPUs now: allocated to jobs (their plan's widths), lent to them by the idle fill, and paid (on the nodes running; before the pool answers a listing after a start, as the ledger books them)",
    (g) => {
      const { gpus } = statusView(service);
      g.set({ kind: 'allocated' }, gpus.allocated);
      g.set({ kind: 'lent' }, gpus.lent);
      g.set({ kind: 'paid' }, gpus.paid);
    },
    ['kind'],
  );
  gauge('boa_jobs_queued_for_budget', 'Waiting jobs the budget holds back', (g) =>
    g.set(statusView(service).budget?.queuedForBudget ?? 0),
  );
  gauge(
    'boa_load_needs_gpu_hours_per_hour',
    'The budget the current load needs (its cheapest plan); above the budget, jobs queue (NaN with no budget)',
    (g) => g.set(service.state.budget ? service.loadNeeds() : NaN),
  );
  gauge(
    'boa_gpus_below_budget',
    'GPUs paid below the budget now, by why: jobs waiting, usable by running jobs, or nothing present can use',
    (g) => {
      const below = belowBudgetNow(service);
      g.set({ reason: 'waiting' }, below.waitingGpus);
      g.set({ reason: 'usable' }, below.usableGpus);
      g.set({ reason: 'unusable' }, below.unusableGpus);
    },
    ['reason'],
  );
  // The queue's wait: how long the job waiting longest for GPUs has waited, since its submission or,
  // for one that ran and was queued again (a budget cut), since then: the scheduler moves a job to
  // waiting with a new generation, so its generationSince is when it was queued.
  gauge(
    'boa_longest_job_wait_seconds',
    'How long the job waiting longest for GPUs has waited: since its submission, or since it was queued again after running (0 with none)',
    (g) => {
      let oldest = Number.POSITIVE_INFINITY;
      for (const job of service.state.jobs.values()) {
        if (job.state !== 'waiting') continue;
        const since = job.startedAt === null ? job.submittedAt : (job.generationSince ?? job.startedAt);
        oldest = Math.min(oldest, since);
      }
      g.set(Number.isFinite(oldest) ? (service.deps.clock.now() - oldest) / 1000 : 0);
    },
  );
  // Since this process started (rate() and increase() read a restart's 0 as a reset).
  const counter = (name: string, help: string, key: keyof OpsCounters) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(service.state.counters[key]);
      },
    });
  counter(
    'boa_tick_failures_total',
    "Scheduling ticks that failed (the store not written, an error in boa); the log's tick_failed says why",
    'tickFailures',
  );
  counter(
    'boa_node_pool_failures_total',
    "Failed listings of the node pool (AWS, Kubernetes) after their retries; the log's pool_unavailable",
    'poolFailures',
  );
  counter(
    'boa_metrics_publish_failures_total',
    "Ticks whose CloudWatch metrics, the Heartbeat among them, were not delivered; the log's metrics_failed",
    'metricsPublishFailures',
  );
  counter(
    'boa_job_restarts_total',
    'Failed job runs restarted after a backoff (a job out of restarts is boa_jobs{state="failed"})',
    'jobRestarts',
  );
  counter(
    'boa_plan_failures_total',
    "Plan computations that failed, the plan in force kept (GET /v1/status's plannerError says why); the log's plan_failed",
    'planFailures',
  );
  nodeGroupMetrics(registry, service);
  return registry;
}
