import { type ServiceJob, plannedWidth } from './jobs.ts';
import { IncrementalPlacement } from './placement.ts';
import type { MetricDatum, PoolNode } from './ports.ts';
import type { BoaService } from './service.ts';

export interface TickDecision {
  readonly changed: ServiceJob[];
  readonly wantedGpus: number;
  readonly allocatedGpus: number;
  readonly desiredNodes: number;
}

export interface TickReport extends TickDecision {
  readonly at: number;
  /** The decision alone: widths, placement, node count. */
  readonly decideMs: number;
  /** The decision and its store transaction (no cloud calls). */
  readonly computeMs: number;
  readonly nodes: number;
  readonly readyNodes: number;
}

function isSortedById(jobs: readonly ServiceJob[]): boolean {
  for (let i = 1; i < jobs.length; i++)
    if ((jobs[i] as ServiceJob).id < (jobs[i - 1] as ServiceJob).id) return false;
  return true;
}

/**
 * One scheduling tick: every active job gets its plan's width for its class and statistical epoch,
 * placement keeps jobs already at the right width and packs the rest, and the node group is sized
 * to ceil(GPUs wanted / GPUs per node) within its bounds. It never waits for the calculator.
 */
export class Scheduler {
  private resizing: Promise<void> | null = null;
  private readonly placement = new IncrementalPlacement();

  constructor(private readonly service: BoaService) {}

  /** The pure part of a tick (benchmarked): decides widths, placements and the node count. */
  decide(now: number, readyNodes: readonly PoolNode[]): TickDecision {
    const { state, deps } = this.service;
    const active = [...state.jobs.values()];
    // Jobs are kept in id (arrival) order; sort only if a restore ever breaks that.
    if (!isSortedById(active)) active.sort((a, b) => a.id - b.id);
    const admitted = new Set<ServiceJob>();
    for (const job of active) if (!job.widths && this.service.admit(job)) admitted.add(job);
    const { config } = deps;
    const group = state.group;
    const cap = Math.min(
      group?.maxSize ?? Number.MAX_SAFE_INTEGER,
      config.maxNodes ?? Number.MAX_SAFE_INTEGER,
    );
    const placement = this.placement.place(active, plannedWidth, readyNodes, {
      gpusPerNode: config.gpusPerNode,
      minNodes: Math.min(group?.minSize ?? 0, cap),
      maxNodes: cap,
    });
    const changed: ServiceJob[] = [];
    for (const job of active) {
      const next = placement.changed.get(job.id);
      if (next === undefined) {
        // Admission stored its widths: saved with the tick even if it still waits.
        if (admitted.has(job)) changed.push(job);
        continue;
      }
      job.allocation = next as string[];
      job.width = next.length;
      job.generation += 1;
      job.state = next.length > 0 ? 'running' : 'waiting';
      if (next.length > 0 && job.startedAt === null) {
        job.startedAt = now;
        job.epochStartedAt = now;
        job.epochGeneration = job.generation;
      }
      changed.push(job);
    }
    return {
      changed,
      wantedGpus: placement.wantedGpus,
      allocatedGpus: placement.allocatedGpus,
      desiredNodes: placement.desiredNodes,
    };
  }

  async tick(): Promise<TickReport> {
    const { state, deps } = this.service;
    const { pool, repo, logger, clock } = deps;
    const now = clock.now();
    try {
      state.nodes = await pool.listNodes();
      state.group = await pool.describe();
    } catch (error) {
      logger.warn({ event: 'pool_unavailable', error: (error as Error).message }, 'node pool not answering');
    }
    const started = performance.now();
    const ready = state.nodes.filter((n) => n.ready);
    const decision = this.decide(now, ready);
    const decideMs = performance.now() - started;
    repo.transaction(() => {
      this.service.flushAllocation(now);
      state.allocatedGpus = decision.allocatedGpus;
      for (const job of decision.changed) repo.saveJobState(job);
      repo.observeNodes(state.nodes, now);
      repo.setLastTick(now);
    });
    state.lastTickAt = now;
    const computeMs = performance.now() - started;
    state.lastTickMs = computeMs;
    for (const job of decision.changed) {
      logger.debug(
        {
          event: 'allocation',
          jobId: job.id,
          width: job.width,
          generation: job.generation,
          state: job.state,
        },
        'allocation changed',
      );
    }
    this.maybeResize(decision.desiredNodes, now);
    this.service.planner.maybeRun();
    void deps.metrics.put(this.metrics(decision, now), now).catch((error: Error) => {
      logger.warn({ event: 'metrics_failed', error: error.message }, 'metrics not published');
    });
    return { ...decision, at: now, decideMs, computeMs, nodes: state.nodes.length, readyNodes: ready.length };
  }

  /**
   * Resizes only when the target changes, one request at a time. The request is stored before it is
   * sent, so after a crash the same target is never sent as a new resize (the pool is idempotent
   * for an unchanged target, and `resume` re-sends one that may not have arrived).
   */
  maybeResize(target: number, now: number): void {
    const { repo, logger } = this.service.deps;
    if (this.resizing) return;
    const last = repo.lastResize();
    if (last && last.target === target && last.status !== 'failed') return;
    const row = repo.insertResize({ at: now, target, requested: target, status: 'requested' });
    logger.info({ event: 'resize', target, previous: last?.target ?? null }, 'node group resize');
    this.send(row.id, target);
  }

  /** After a restart: a resize stored as requested may not have reached the pool; send it again. */
  resume(): void {
    const last = this.service.deps.repo.lastResize();
    if (last?.status === 'requested') this.send(last.id, last.target);
  }

  private send(id: number, target: number): void {
    const { repo, pool, logger } = this.service.deps;
    this.resizing = pool
      .setDesiredSize(target)
      .then((result) => {
        repo.updateResize(id, {
          status: 'applied',
          requested: result.requested,
          updateId: result.updateId ?? null,
        });
      })
      .catch((error: Error) => {
        repo.updateResize(id, { status: 'failed', error: error.message });
        logger.error({ event: 'resize_failed', target, error: error.message }, 'resize failed');
      })
      .finally(() => {
        this.resizing = null;
      });
  }

  /** Waits for a resize in flight (tests, shutdown). */
  async settle(): Promise<void> {
    while (this.resizing) await this.resizing;
  }

  /** The window's paid average, refreshed every few minutes: it moves slowly and costs a query. */
  private paidAverage = { at: Number.NEGATIVE_INFINITY, value: 0 };

  private metrics(decision: TickDecision, now: number): MetricDatum[] {
    const { state, deps } = this.service;
    if (now - this.paidAverage.at >= 5 * 60_000) {
      const window = deps.config.budgetWindowHours * 3_600_000;
      const averages = this.service.ledgerAverages(Math.max(now - window, state.startedAt), now);
      this.paidAverage = { at: now, value: averages.paidGpuHoursPerHour };
    }
    const paidNow = state.nodes.reduce((sum, n) => sum + n.gpus, 0);
    const running = [...state.jobs.values()].filter((j) => j.state === 'running').length;
    return [
      { name: 'BudgetGpuHoursPerHour', value: state.budget?.gpuHoursPerHour ?? 0, unit: 'None' },
      { name: 'PaidGpuHoursPerHour', value: paidNow, unit: 'None' },
      { name: 'AllocatedGpuHoursPerHour', value: decision.allocatedGpus, unit: 'None' },
      { name: 'PaidGpuHoursPerHourAverage', value: this.paidAverage.value, unit: 'None' },
      { name: 'DesiredNodes', value: decision.desiredNodes, unit: 'Count' },
      { name: 'ActualNodes', value: state.nodes.length, unit: 'Count' },
      { name: 'JobsRunning', value: running, unit: 'Count' },
      { name: 'JobsWaiting', value: state.jobs.size - running, unit: 'Count' },
      { name: 'PredictedAvgJctSeconds', value: state.plan?.row.predictedAvgJctSeconds ?? 0, unit: 'Seconds' },
    ];
  }
}
