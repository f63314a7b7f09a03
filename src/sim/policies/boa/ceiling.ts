/**
 * The service's spend ceiling as boa runs it in the simulator (core/spend-ceiling.ts): what the budget
 * window's spend so far allows from now on, and the planned widths that fit under it.
 */
import type { SpendCeiling, SpendCeilingOptions } from '../../../core/spend-ceiling.ts';
import { type QueueKeys, widthsUnderCeiling } from '../../../core/ceiling-widths.ts';
import { ceilingLookbacks, spendCeiling } from '../../../core/spend-ceiling.ts';
import type { SpeedupTable } from '../../../core/profile.ts';
import type { ClusterView } from '../../policy.ts';
import type { BudgetControl } from './budget-control.ts';

export function ceilingNow(
  options: SpendCeilingOptions,
  budget: number,
  windowHours: number,
  control: BudgetControl,
  cluster: ClusterView,
): SpendCeiling {
  control.forgetBefore(windowHours * 3600);
  return spendCeiling({
    ...options,
    budgetGpuHoursPerHour: budget,
    windowHours,
    elapsedHours: control.elapsedSeconds() / 3600,
    paidInLast: (hours) => control.paidInLast(hours * 3600) / 3600,
    gpusPerNode: cluster.gpusPerNode,
    heldNodes: cluster.nodes.length,
  });
}

/**
 * The budget unspent in what the ceiling's spread rule counts as the window so far (the service reads
 * it off its ceiling's debt), GPU-hours; negative: debt.
 */
export function unspentInLookback(
  options: SpendCeilingOptions,
  budget: number,
  windowHours: number,
  control: BudgetControl,
): number {
  const [lookback = 0] = ceilingLookbacks(windowHours, options.horizonHours, control.elapsedSeconds() / 3600);
  return budget * lookback - control.paidInLast(lookback * 3600) / 3600;
}

/** The planned widths the ceiling allows (the service's rule); jobs left out wait with no GPUs. */
export function servedUnderCeiling<W extends { id: number; state: string; width: number; provision: number }>(
  planned: readonly W[],
  held: ReadonlyMap<number, number>,
  gpus: number,
  speedupOf: (w: W) => SpeedupTable | undefined,
  waitedLong?: (w: W) => boolean,
  weightOf?: (w: W) => number,
  queue?: QueueKeys<W>,
): W[] {
  const served = widthsUnderCeiling(
    planned,
    (w) => w.width,
    (w) => held.get(w.id) ?? 0,
    gpus,
    speedupOf,
    waitedLong,
    weightOf,
    queue,
  );
  return planned.flatMap((w) => {
    const width = served.get(w) ?? 0;
    if (width === 0) return [];
    return width === w.width ? [w] : [{ ...w, width, provision: width }];
  });
}
