import { type EpochProfile, listedWidths } from '../../core/profile.ts';
import type { PlanInputs, PlanResult } from './compute.ts';

/** Relative slack on the predicted spend: the solvers spend at most the budget, up to rounding. */
const SPEND_TOLERANCE = 1e-6;

/**
 * What makes a computed plan unfit to put in force, or undefined when it is sound: the widths a job
 * of each class may get (one its profile lists, within the node group: as core/instance.ts reads
 * them), shares that add up to 1, and finite predictions within the budget it was given. The calculator runs
 * in a worker, and a solver's bug answers whatever it computed: a plan of NaN widths, put in force,
 * left every job waiting for GPUs with no error anywhere (found in review).
 */
export function planDefect(inputs: PlanInputs, result: PlanResult): string | undefined {
  const plan = result.plan as Record<string, unknown> | undefined;
  if (typeof plan !== 'object' || plan === null) return 'it has no widths table';
  const maxWidth = inputs.maxWidth ?? Number.POSITIVE_INFINITY;
  for (const cls of inputs.classes) {
    const shares = plan[cls.name];
    if (!Array.isArray(shares) || shares.length === 0) return `class ${cls.name} has no widths`;
    let total = 0;
    for (const { share, widths } of shares as Array<{ share: unknown; widths: unknown }>) {
      if (typeof share !== 'number' || !(share >= 0 && share <= 1)) {
        return `class ${cls.name} has a share of ${String(share)}, not a fraction from 0 to 1`;
      }
      total += share;
      if (!Array.isArray(widths) || widths.length !== cls.epochs.length) {
        return `class ${cls.name} has ${Array.isArray(widths) ? widths.length : 'no'} widths for its ${cls.epochs.length} epochs`;
      }
      for (const [e, epoch] of cls.epochs.entries()) {
        const width: unknown = widths[e];
        // A lookup, not the instance's width lists: those take seconds to build for the largest profiles.
        const fits = typeof width === 'number' && width <= maxWidth && Object.hasOwn(epoch.speedup, width);
        if (!fits) {
          return `class ${cls.name}, epoch ${e}: width ${String(width)} is not one it can get (${listed(epoch, maxWidth)})`;
        }
      }
    }
    if (Math.abs(total - 1) > 1e-6) return `class ${cls.name}'s shares add up to ${total}, not 1`;
  }
  const { gpuHoursPerHour, avgJctSeconds } = result.value ?? {};
  if (!isNonNegative(gpuHoursPerHour))
    return `its predicted spend is ${String(gpuHoursPerHour)} GPU-hours per hour`;
  if (!isNonNegative(avgJctSeconds)) return `its predicted average JCT is ${String(avgJctSeconds)} seconds`;
  if (!isNonNegative(result.minFeasibleBudget)) {
    return `its minimum feasible budget is ${String(result.minFeasibleBudget)} GPU-hours per hour`;
  }
  const given = Math.max(inputs.planningBudget, result.minFeasibleBudget);
  if (gpuHoursPerHour > given * (1 + SPEND_TOLERANCE)) {
    return `it spends ${gpuHoursPerHour} GPU-hours per hour, over the ${given} it was given`;
  }
  return undefined;
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** The widths an epoch allows, shortened when there are many (1024 widths would fill the log). */
function listed(epoch: EpochProfile, maxWidth: number): string {
  const widths = listedWidths(epoch).filter((w) => w <= maxWidth);
  return widths.length <= 8 ? widths.join(', ') : `${widths.slice(0, 4).join(', ')}, ..., ${widths.at(-1)}`;
}
