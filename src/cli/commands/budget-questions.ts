/**
 * What `boa budget set` asks on a terminal before a budget change that is likely a slip (a cut to under
 * half, a raise to over twice, a first budget above what the node group can run), and never of one the
 * service refuses. Apart from the command: the questions are the rules, the command only asks them.
 */
import type { budgetView } from '../../service/views.ts';

type BudgetView = ReturnType<typeof budgetView>;

/**
 * What to ask before setting `next`, if anything. Nothing for a budget the service refuses (0 or below,
 * below the smallest it accepts, above the largest): it says why and the smallest it takes, and asking
 * "cut the budget from 40 to 0?" first made the newcomer confirm a change that was never going to be made.
 */
export function budgetQuestion(
  now: Pick<BudgetView, 'gpuHoursPerHour' | 'maxGpus'> & { accepted?: BudgetView['accepted'] },
  next: number,
): string | undefined {
  // Nor for one outside what it accepts (a service from before `accepted`: 0 and below only).
  const { min, max } = now.accepted ?? { min: 0, max: Number.POSITIVE_INFINITY };
  if (next <= 0 || next < min || next > max) return undefined;
  return (
    cutQuestion(now.gpuHoursPerHour, next) ?? firstBudgetQuestion(now.gpuHoursPerHour, next, now.maxGpus)
  );
}

/**
 * What to ask before a cut to under half the budget (a typo of 4 for 40 would otherwise narrow or queue
 * the running jobs and release their nodes at the next tick), or a raise to over twice it (400 for 40
 * launches nodes at the next tick, paid from launch: found in a trial, 100000 booted 39 nodes within
 * seconds); undefined when no question is needed.
 */
export function cutQuestion(current: number | null, next: number): string | undefined {
  if (current === null) return undefined;
  if (next < current / 2) {
    return (
      `cut the budget from ${current} to ${next} GPU-hours/hour? At the next tick running jobs are ` +
      'narrowed or queued to fit it, and nodes released'
    );
  }
  if (next > current * 2) {
    return (
      `raise the budget from ${current} to ${next} GPU-hours/hour? At the next tick jobs may be widened ` +
      'and nodes launched up to what it allows, each paid from its launch'
    );
  }
  return undefined;
}

/**
 * What to ask before a first budget above the most GPUs the node group can ever run (maxGpus): with no
 * budget before it, no cut or raise is asked about, and 100000 typed for 100 lets boa launch every node
 * the group allows at the next tick. A budget above maxGpus holds nothing back, so it is a slip or
 * means "no limit", which deserves a yes. Undefined when no question is needed or the maximum is unknown (an older service does not say it).
 */
export function firstBudgetQuestion(
  current: number | null,
  next: number,
  maxGpus: number | null | undefined,
): string | undefined {
  if (current !== null || maxGpus === null || maxGpus === undefined || next <= maxGpus) return undefined;
  return (
    `set a first budget of ${next} GPU-hours/hour, more than the ${maxGpus} GPUs the node group can ever ` +
    'run? It holds nothing back: at the next tick jobs may be widened and nodes launched up to the ' +
    "group's maximum, each paid from its launch"
  );
}
