/**
 * The widths step of a tick (Scheduler.decide): the node bounds the group and the budget allow, the
 * plan's widths within them (budget-widths.ts), and the drain's on top (drain.ts).
 */
import { budgetLimitedWidths } from './budget-widths.ts';
import { drainedWidths } from './drain.ts';
import type { ServiceJob } from './jobs.ts';
import type { PlacementBounds } from './placement.ts';
import { profilesInUse } from './profiles-in-use.ts';
import type { BoaService } from './service.ts';

export interface TickWidths {
  /** Each active job's width this tick. */
  readonly widthOf: (job: ServiceJob) => number;
  /** GPUs the drain adds to the budget's widths. */
  readonly drainExtraGpus: number;
  readonly bounds: PlacementBounds;
}

/**
 * `active`: the active jobs in id order; `ceilingNodes`, `belowBand`: as Scheduler.decide takes them.
 * Sets state.draining and state.fillingToBudget.
 */
export function tickWidths(
  service: BoaService,
  active: readonly ServiceJob[],
  now: number,
  ceilingNodes: number,
  belowBand: boolean,
): TickWidths {
  const { state, deps } = service;
  const { config } = deps;
  const group = state.group;
  const cap = Math.min(group?.maxSize ?? Number.MAX_SAFE_INTEGER, config.maxNodes ?? Number.MAX_SAFE_INTEGER);
  const minNodes = Math.min(group?.minSize ?? 0, cap);
  // The group's minimum nodes are paid whatever boa asks, so jobs may use them even when the ceiling
  // allows fewer: that adds nothing to the bill, and the bounds stay minNodes <= maxNodes.
  const budgetNodes = Math.max(minNodes, ceilingNodes);
  const maxNodes = Math.min(cap, budgetNodes);
  // Narrowed to what can run: the budget's GPUs, or the group's when its maximum is below them (a
  // budget set at the group's size, whose ceiling allows a node more). Narrowed to the budget's only,
  // the jobs the group could not hold waited whole while the others kept wider widths.
  const served = budgetLimitedWidths(
    active,
    maxNodes * config.gpusPerNode,
    profilesInUse(service),
    now,
    config.keptWidthWaitMinutes * 60_000,
    { order: config.queueOrder, overdueMs: config.queueOverdueHours * 3_600_000 },
    maxNodes === budgetNodes,
  );
  const maxGpus = maxNodes * config.gpusPerNode;
  const drained = drainedWidths(service, active, served, maxGpus, now, belowBand);
  state.draining = drained?.draining ?? false;
  state.fillingToBudget = drained?.filling ?? false;
  const widthOf = drained?.widthOf ?? served;
  let drainExtraGpus = 0;
  if (drained) for (const job of active) drainExtraGpus += widthOf(job) - served(job);
  return { widthOf, drainExtraGpus, bounds: { gpusPerNode: config.gpusPerNode, minNodes, maxNodes } };
}
