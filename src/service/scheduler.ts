import type { ServiceJob } from './jobs.ts';
import { bookedByClass } from './gpu-time.ts';
import { IncrementalPlacement } from './placement.ts';
import { StoppingGpus } from './stopping-gpus.ts';
import type { PoolNode } from './ports.ts';
import type { NodeReconciler } from './nodes/reconciler.ts';
import { NodePasses } from './node-passes.ts';
import type { BoaService } from './service.ts';
import { publishTickMetrics, tickMetrics } from './tick-metrics.ts';
import { recordTick } from './tick-record.ts';
import { intervalPlan } from './demand.ts';
import { bandFillOptions, windowBelowBand } from '../core/exec/band-fill.ts';
import { ceilingLookbackHours } from '../core/spend-ceiling.ts';
import { replanIfGroupResized } from './plan-inputs.ts';
import { ratesCheckOf } from './rates-check.ts';
import { TickUndo } from './tick-undo.ts';
import { UnseenNodes } from './unseen-nodes.ts';
import { countUnlisted, describeUnlisted, trimBlind } from './blind-trim.ts';
import { parseUnlistedPaid, UNLISTED_PAID_KEY } from './unlisted-paid-snapshot.ts';
import { noteLentGpus, placeWithIdleFill } from './idle-fill-pass.ts';
import { tickWidths } from './tick-widths.ts';
import type { TickDecision, TickReport } from './tick-decision.ts';

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
  private readonly placement = new IncrementalPlacement();
  /** The GPUs stopping replicas hold per node, built once a tick for placement. */
  private readonly stopping = new StoppingGpus();
  /** Node group sizing, victim choice, drift and capacity (src/service/nodes). */
  readonly nodes: NodeReconciler;
  /** The reconciler's passes: each tick's, and one between ticks when a removal's nodes empty. */
  private readonly nodePasses: NodePasses;
  /** Instances launched and gone between listings, charged to the ledger (unseen-nodes.ts). */
  private readonly unseen: UnseenNodes;
  /** Asks the loop for a tick now (main.ts): a job waiting for a stopping replica's GPUs starts once freed. */
  tickWanted: (() => void) | undefined;

  constructor(private readonly service: BoaService) {
    this.nodePasses = new NodePasses(service, (name) => this.placement.gpusOn(name));
    this.nodes = this.nodePasses.reconciler;
    // From the last listing the ledger stored: after a restart that followed failing listings, the last
    // tick is later, and launches and terminations early in the outage fell out of the read.
    this.unseen = new UnseenNodes(
      service.deps.repo.ledger.lastListedAt() ?? service.state.lastTickAt ?? service.deps.clock.now(),
    );
    service.state.nodeStatus = () => this.nodes.view();
    service.execution.onStoppingEnded = () => {
      if (service.state.heldByStopping.size > 0) this.tickWanted?.();
    };
    // The unlisted GPUs counted before a restart in a listing outage (unlisted-paid.ts).
    const stored = service.deps.repo.getSetting(UNLISTED_PAID_KEY);
    if (stored !== undefined) service.state.unlisted.restore(parseUnlistedPaid(stored));
  }

  /**
   * The pure part of a tick (benchmarked): decides widths, placements and the node count.
   * `ceilingNodes`: the most nodes the budget window allows (core/spend-ceiling.ts); jobs beyond it wait.
   * `undo` hears of each job before it changes (the tick puts them back if its transaction fails).
   * `belowBand`: the budget window paid more than `fillBelowBand` under its budget (src/service/drain.ts).
   */
  decide(
    now: number,
    readyNodes: readonly PoolNode[],
    ceilingNodes = Number.POSITIVE_INFINITY,
    undo = new TickUndo(now),
    belowBand = false,
  ): TickDecision {
    const { state, deps } = this.service;
    const active = [...state.jobs.values()];
    // Jobs are kept in id (arrival) order; sort only if a restore ever breaks that.
    if (!isSortedById(active)) active.sort((a, b) => a.id - b.id);
    const rewidthed = new Set<ServiceJob>();
    const planId = state.plan?.row.id;
    for (const job of active) {
      // Every job follows the current plan (plan-inputs.ts followPlan); saved when its widths changed.
      if (job.planId === planId) continue;
      undo.note(job);
      if (this.service.followPlan(job)) rewidthed.add(job);
    }
    const widths = tickWidths(this.service, active, now, ceilingNodes, belowBand);
    const { widthOf } = widths;
    // GPUs stopping replicas hold go to no new placement. Node sizing ignores them (the wanted GPUs are
    // the plan's): a node launched for a grace (120 s by default) boots in about as long, then is paid
    // past it out of the budget, and the reconciler removes it again.
    const { execution } = this.service;
    const stopping = this.stopping.perNode(
      state.liveReplicas,
      execution.orderedStops,
      state.jobs,
      deps.config.gpusPerNode,
      now,
    );
    this.placement.holdStopping(stopping, (id) => execution.sentCurrent(id), this.stopping.overdue);
    const placement = placeWithIdleFill(this.service, this.placement, active, widths, readyNodes, now);
    state.heldByStopping = this.stopping.heldBy(this.placement.heldByStopping, this.placement.heldByLeaving);
    const { lent: idleFillGpus, relent } = noteLentGpus(
      active,
      placement.changed,
      widthOf,
      undo,
      deps.config.idleFill,
    );
    // The jobs placement moved, those a newer plan rewidthed and those lent more or fewer GPUs (saved
    // with the tick even if their allocation did not change), in id order as in `active`: a few a tick.
    const saved = new Set([...rewidthed, ...relent]);
    const changed: ServiceJob[] = [...saved];
    for (const id of placement.changed.keys()) {
      const job = state.jobs.get(id) as ServiceJob;
      if (!saved.has(job)) changed.push(job);
    }
    changed.sort((a, b) => a.id - b.id);
    let placedShort = false;
    for (const job of changed) {
      const next = placement.changed.get(job.id);
      if (next === undefined) continue;
      if (next.length > 0 && next.length < widthOf(job)) placedShort = true;
      undo.note(job);
      // Its replicas the executor may run hold their GPUs until it answers (ordered-stops.ts).
      execution.stopOrdered(job, job.generation, job.allocation);
      job.allocation = next as string[];
      job.width = next.length;
      job.generation += 1;
      job.generationSince = now;
      job.state = next.length > 0 ? 'running' : 'waiting';
      if (next.length > 0 && job.startedAt === null) {
        job.startedAt = now;
        job.epochStartedAt = now;
        job.epochGeneration = job.generation;
        // Until the job reports from this generation (clients report epoch 0 once started): the
        // startup is in the clock, and the profile's rescaleSeconds stands for it.
        job.epochTimedFromReport = false;
      }
    }
    return {
      changed,
      wantedGpus: placement.wantedGpus,
      // After the idle fill's moves (this.placement's count), less the GPUs it lent.
      allocatedGpus: this.placement.allocatedGpus - idleFillGpus,
      desiredNodes: placement.desiredNodes,
      drainExtraGpus: widths.drainExtraGpus,
      placedShort,
    };
  }

  /** One tick, counted when it fails and timed while it runs (for /metrics and /healthz). */
  async tick(): Promise<TickReport> {
    const { state, deps } = this.service;
    state.tickStartedAt = deps.clock.now();
    try {
      return await this.tickOnce();
    } catch (error) {
      state.counters.tickFailures += 1;
      throw error;
    } finally {
      state.tickStartedAt = undefined;
    }
  }

  private async tickOnce(): Promise<TickReport> {
    const { state, deps } = this.service;
    const { pool, logger, clock } = deps;
    let listed = false;
    const listedAt = clock.now();
    try {
      state.nodesListing += 1;
      state.nodes = await pool.listNodes();
      listed = true;
      state.group = await pool.describe();
      replanIfGroupResized(this.service);
    } catch (error) {
      state.counters.poolFailures += 1;
      logger.warn({ event: 'pool_unavailable', error: (error as Error).message }, 'node pool not answering');
    }
    // The group as described in a listing outage (blind-trim.ts): once a tick, whether boa restarted or not.
    const described = listed ? undefined : await describeUnlisted(this.service);
    // Registrations the last comparison of the load with the plan's has not seen (rates-check.ts).
    ratesCheckOf(this.service).atTick();
    const { spans: unseen, gone } = listed
      ? await this.unseen.read(pool, state.nodes, deps.config.gpusPerNode, clock.now(), logger)
      : { spans: [], gone: new Map<string, number>() };
    // After the pool's calls (a second or more on AWS): a job submitted meanwhile starts no earlier than
    // it was submitted, and a node the listing no longer has is paid until now, never less.
    const now = clock.now();
    const started = performance.now();
    const held = () => gpusHeldPerNode(state.jobs.values());
    const ready = this.nodes.usable(state.nodes, held);
    // Before the ceiling: nodes launched since the last listing are paid though no listing shows them.
    if (!listed) countUnlisted(this.service, now, described);
    const ceiling = this.service.spendCeiling(now);
    // While the heartbeat does not reach CloudWatch, no more nodes than the budget guard would leave.
    const heldNodes = this.service.heartbeat.nodes(
      now,
      state.budget?.gpuHoursPerHour,
      deps.config.gpusPerNode,
      state.group?.minSize ?? 0,
    );
    const ceilingNodes = Math.min(ceiling?.nodes ?? Number.POSITIVE_INFINITY, heldNodes);
    const { fillBelowBand, budgetWindowHours, budgetHorizonHours } = deps.config;
    const belowBand =
      ceiling !== undefined &&
      windowBelowBand(
        ceiling,
        bandFillOptions(fillBelowBand, ceilingLookbackHours(budgetWindowHours, budgetHorizonHours)),
      );
    const undo = new TickUndo(now);
    // Until the pool has listed its nodes once since the start, state.nodes is the empty list boot
    // left: deciding on it took every running job off its nodes, a restart of each (found in review:
    // an API server blip during boa's restart). A later failed listing reuses the last one.
    if (listed) state.nodesListed = true;
    let decision: TickDecision;
    try {
      decision = state.nodesListed
        ? this.decideListed(now, ready, ceilingNodes, undo, belowBand, held)
        : this.jobsAsTheyAre();
      undo.settleGenerations(decision.changed);
    } catch (error) {
      // A removal is stored as it is chosen (nodes/removals.ts), outside the tick's transaction: when
      // that write fails, the jobs this tick changed go back, as when the transaction fails.
      undo.restore();
      throw error;
    }
    const decideMs = performance.now() - started;
    const allocatedFrom = state.allocatedFrom;
    // The group's size described with this listing (a failed describe leaves the last one).
    const groupSize = state.group?.desiredSize ?? 0;
    try {
      recordTick(this.service, {
        now,
        changed: decision.changed,
        listed,
        gone,
        lastListedAt: this.unseen.lastListedAt,
        unseen,
        groupSize,
      });
      if (listed) {
        this.unseen.advance(listedAt);
        state.unlisted.listed(now, state.nodes, groupSize, state.group?.gpusPerNode);
      }
    } catch (error) {
      // Rolled back: memory goes back to what the store holds, so the next tick decides it all again
      // and closes the allocation interval from where the ledger ends. The placement re-places a job
      // whose allocation is not the array it handed out, so it needs no undoing.
      undo.restore();
      state.allocatedFrom = allocatedFrom;
      throw error;
    }
    state.allocatedGpus = decision.allocatedGpus;
    state.allocatedByClass = bookedByClass(state.jobs.values());
    state.intervalPlan = intervalPlan(this.service, decision.drainExtraGpus);
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
    if (state.nodesListed) this.nodePasses.afterTick(decision.desiredNodes);
    else if (state.unlisted.listedAt !== undefined)
      await trimBlind(this.service, this.nodes.size, ceilingNodes, now, described);
    this.service.execution.afterTick(now);
    this.service.planner.maybeRun();
    publishTickMetrics(
      this.service,
      tickMetrics(this.service, decision, now, ceiling?.gpus ?? 0, this.nodes.metrics(now)),
      now,
    );
    return { ...decision, at: now, decideMs, computeMs, nodes: state.nodes.length, readyNodes: ready.length };
  }

  /** The tick's decision on the nodes listed: widths, placement, the node count and removals. */
  private decideListed(
    now: number,
    ready: readonly PoolNode[],
    ceilingNodes: number,
    undo: TickUndo,
    belowBand: boolean,
    held: () => ReadonlyMap<string, number>,
  ): TickDecision {
    let decision = this.decide(now, ready, ceilingNodes, undo, belowBand);
    if (decision.placedShort) {
      // Under the spend ceiling the job keeps that width from now on (a running job keeps a width
      // within 2x of its target, to spare a restart: core/ceiling-widths.ts), so the next tick, reading
      // the widths this one leaves, no longer counts the GPUs it was short of and scaled in a node
      // launched for them while it booted (found by a newcomer, who saw it after a restart). Decided
      // again on those widths, the node count is the one the next tick holds.
      decision = this.decideAgain(decision, now, ready, ceilingNodes, undo, belowBand);
    }
    if (this.nodePasses.chooseNow(decision.desiredNodes, ceilingNodes)) {
      // Nodes chosen for removal had jobs: place those jobs elsewhere now (or let them wait).
      const usable = this.nodes.usable(this.service.state.nodes, held);
      decision = this.decideAgain(decision, now, usable, ceilingNodes, undo, belowBand);
    }
    return decision;
  }

  /** No listing since the start: every job stays as it is, and the node count is left alone. */
  private jobsAsTheyAre(): TickDecision {
    const { state } = this.service;
    return {
      changed: [],
      wantedGpus: 0,
      allocatedGpus: state.allocatedGpus,
      desiredNodes: state.group?.desiredSize ?? 0,
      drainExtraGpus: 0,
      placedShort: false,
    };
  }

  /** Decides again after `first` changed jobs or nodes; the jobs either pass changed are saved. */
  private decideAgain(
    first: TickDecision,
    now: number,
    readyNodes: readonly PoolNode[],
    ceilingNodes: number,
    undo: TickUndo,
    belowBand: boolean,
  ): TickDecision {
    const next = this.decide(now, readyNodes, ceilingNodes, undo, belowBand);
    return { ...next, changed: [...new Set([...first.changed, ...next.changed])] };
  }

  /** After a restart: removals and resizes carry on from their stored state at the next tick. */
  resume(): void {}

  /** Waits for the node reconciler's pass in flight (tests, shutdown). */
  async settle(): Promise<void> {
    await this.nodePasses.settle();
  }
}

/** GPUs each node's jobs hold, by the node names allocations use. */
function gpusHeldPerNode(jobs: Iterable<ServiceJob>): Map<string, number> {
  const held = new Map<string, number>();
  for (const job of jobs) for (const node of job.allocation) held.set(node, (held.get(node) ?? 0) + 1);
  return held;
}
