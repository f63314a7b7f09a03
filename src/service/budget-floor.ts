import type { ClassProfile } from '../core/profile.ts';

/** The fewest GPUs any class can run a job on: a budget below this cannot run anything. */
function smallestJobGpus(classes: readonly ClassProfile[]): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (const c of classes) {
    for (const e of c.epochs) {
      for (const width of Object.keys(e.speedup)) smallest = Math.min(smallest, Number(width));
    }
  }
  return Number.isFinite(smallest) ? smallest : 1;
}

/**
 * The smallest budget the service accepts, and why: what one job of the cheapest class needs to run
 * at all, in GPUs, rounded up to whole nodes. The service refuses a budget below it (422); the
 * simulator's scripts refuse the same, so a simulated boa never runs a budget no service would.
 */
export function budgetFloor(
  classes: readonly ClassProfile[],
  gpusPerNode: number,
): { readonly leastPaid: number; readonly why: string } {
  const smallest = smallestJobGpus(classes);
  // Nodes are paid whole: a budget below one node's GPUs keeps no job running either (accepted, it ran
  // nothing for the first hour or more and said nothing: found trying boa as a newcomer).
  const leastPaid = Math.ceil(smallest / gpusPerNode - 1e-9) * gpusPerNode;
  const gpus = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;
  const why =
    leastPaid > smallest
      ? `the cheapest class needs at least ${gpus(smallest)}, and boa pays whole nodes of ${gpus(gpusPerNode)}`
      : `the cheapest class needs at least ${gpus(smallest)}`;
  return { leastPaid, why };
}

/** The refusal's words for a budget below the floor, or null when it is accepted. */
export function budgetBelowFloor(
  gpuHoursPerHour: number,
  classes: readonly ClassProfile[],
  gpusPerNode: number,
): { readonly leastPaid: number; readonly message: string } | null {
  const { leastPaid, why } = budgetFloor(classes, gpusPerNode);
  if (gpuHoursPerHour >= leastPaid) return null;
  return {
    leastPaid,
    message:
      `budget ${gpuHoursPerHour} GPU-hours/hour cannot keep even one job running: ${why}. ` +
      `The smallest accepted budget is ${leastPaid}.`,
  };
}
