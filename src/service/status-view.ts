/**
 * GET /v1/status's body: the node group as the cloud reports it and as boa counts its nodes, GPUs
 * allocated, lent and paid, jobs by state, the budget's load, and what fails (planner, executor).
 */
import { classesLeftOut } from './classes-over-bound.ts';
import { isBilled, knownPaidGpus } from './paid-now.ts';
import type { BoaService } from './service.ts';
import { queuedForBudget, round } from './views.ts';

export function statusView(service: BoaService) {
  const { state, deps } = service;
  const counts = deps.repo.countJobsByState();
  // Allocated: the plan's GPUs, as the ledger, /v1/budget and CloudWatch book them; the GPUs the idle
  // fill lends on the jobs' nodes apart (a tile read 4 allocated where the chart read 1).
  let allocated = 0;
  let lent = 0;
  for (const j of state.jobs.values()) {
    allocated += j.allocation.length - j.idleFillGpus;
    lent += j.idleFillGpus;
  }
  const last = deps.repo.lastResize();
  return {
    cloud: deps.pool.kind,
    /** What runs submitted commands (null: none, a workload is refused); the CLI defaults a local one's workdir. */
    executor: deps.executor?.kind ?? null,
    nodeGroup: {
      minSize: state.group?.minSize ?? null,
      maxSize: state.group?.maxSize ?? null,
      // What the cloud reports, not boa's last request (they differ while a change is under way or
      // after someone else changed the group; boa corrects the latter within a tick).
      desiredNodes: state.group?.desiredSize ?? last?.requested ?? null,
      lastResize: last
        ? { target: last.target, status: last.status, at: new Date(last.at).toISOString() }
        : null,
      // Null until the pool answers a listing after a start: boot's empty list is not 0 nodes.
      actualNodes: state.nodesListed ? state.nodes.length : null,
      ...nodeGroupTruth(service),
    },
    // Paid: the nodes billed now (an EKS instance still pending is not), as the ledger counts them.
    gpus: { allocated, lent, paid: knownPaidGpus(state, deps.repo.ledger) },
    jobs: counts,
    budget: state.budget
      ? {
          gpuHoursPerHour: state.budget.gpuHoursPerHour,
          loadNeedsGpuHoursPerHour: round(service.loadNeeds(), 3),
          loadNeedsPaidGpuHoursPerHour: round(service.paidLoadNeeds(), 3),
          loadNeedsAsOf: new Date(service.loadNeedsAsOf()).toISOString(),
          queuedForBudget: queuedForBudget(service),
          draining: state.draining,
          fillingToBudget: state.fillingToBudget,
        }
      : null,
    planId: state.plan?.row.id ?? null,
    plannerError: service.planner.lastError ?? null,
    // Reconciles failing: nothing starts or stops jobs (the log said it; status did not: a review).
    executorError: executorError(service.execution.failing),
    // Stored classes over the speedup-table bound (a data dir from before it): left out of plans.
    classesLeftOut: classesLeftOut(service),
    // A computation that has not ended: a hung one shows here, not only once its timeout fails it.
    plannerComputingSince:
      service.planner.computingSince === undefined
        ? null
        : new Date(service.planner.computingSince).toISOString(),
    lastTickAt: state.lastTickAt === undefined ? null : new Date(state.lastTickAt).toISOString(),
    tickSeconds: deps.config.tickSeconds,
    lastTickMs: round(state.lastTickMs, 3),
  };
}

function executorError(failing: BoaService['execution']['failing']) {
  return failing ? { message: failing.message, since: new Date(failing.since).toISOString() } : null;
}

/**
 * The node group as the cloud reports it (name, status, health issues), nodes not ready and why,
 * removals under way, and the capacity backoff: why jobs wait for nodes.
 */
function nodeGroupTruth(service: BoaService) {
  const { state } = service;
  const nodes = state.nodeStatus?.();
  // Each listed node counted once: ready, not ready (by why) or being removed by boa, so they add up
  // to actualNodes. One boa removes read as ready until the listing after its cordon (found in review).
  const notReady: Record<string, number> = {};
  let ready = 0;
  let removingNodes = 0;
  const replaced = new Map<string, { name: string; nodes: number; paidGpus: number }>();
  for (const n of state.nodes) {
    if (nodes?.removes(n.id)) removingNodes++;
    else if (n.ready) ready++;
    else notReady[n.waitingFor ?? 'booting'] = (notReady[n.waitingFor ?? 'booting'] ?? 0) + 1;
    if (n.replacedGroup === undefined) continue;
    const group = replaced.get(n.replacedGroup) ?? { name: n.replacedGroup, nodes: 0, paidGpus: 0 };
    group.nodes += 1;
    if (isBilled(n)) group.paidGpus += n.gpus;
    replaced.set(n.replacedGroup, group);
  }
  const capacity = nodes?.capacity;
  return {
    readyNodes: state.nodesListed ? ready : null,
    // Listed nodes boa is removing (chosen, cordoned, terminated and not yet gone): paid, given no jobs.
    removingNodes: state.nodesListed ? removingNodes : null,
    name: state.group?.name ?? null,
    status: state.group?.status ?? null,
    // boa's own cloud update still running (EKS may keep one InProgress for minutes): no resize until it ends.
    updateInFlight: state.group?.updateInFlight ?? null,
    issues: state.group?.issues ?? [],
    notReady,
    replaced: [...replaced.values()],
    removing: nodes?.removing ?? [],
    lastRemoval: nodes?.lastRemoval ?? null,
    capacity: capacity ?? null,
    /** One line for people: why jobs waiting for nodes wait. */
    waitingReason: capacity?.backoffUntil
      ? `instances fail to launch (${capacity.reason ?? 'capacity'}); boa asks again after ${capacity.backoffUntil}`
      : null,
  };
}
