/**
 * The widths the spend ceiling allows the service's jobs this tick (core/spend-ceiling.ts, the rule the
 * simulator's boa runs too), each job marked so its view can say why it waits.
 */
import { type ServiceJob, plannedWidth } from './jobs.ts';
import type { ServiceState } from './state.ts';
import { widthsUnderCeiling } from '../core/spend-ceiling.ts';
import { epochSpeedups } from '../core/profile.ts';

/**
 * Planned widths within `gpus` (the ceiling): when they do not all fit, jobs are narrowed by price
 * (core/narrowing.ts: the GPUs that buy the least speed first) before any waits, then jobs beyond what
 * `gpus` can hold (running first, then oldest) wait for the budget; each job is marked so its view can
 * say why it waits. A job that has waited `longWaitMs` since its submission (`now`, ms; the setting
 * keptWidthWaitMinutes) makes the widths running jobs keep above their narrowed ones give way.
 */
export function budgetLimitedWidths(
  jobs: readonly ServiceJob[],
  gpus: number,
  classes: ServiceState['classes'],
  now: number,
  longWaitMs: number,
): (job: ServiceJob) => number {
  // Most ticks the plan fits under the ceiling: every job gets its planned width, none waits for it
  // (what widthsUnderCeiling gives then, without a map of every job each tick).
  let planned = 0;
  for (const job of jobs) {
    job.queuedForBudget = false;
    planned += plannedWidth(job);
  }
  if (planned <= Math.floor(gpus + 1e-9)) return plannedWidth;
  const served = widthsUnderCeiling(
    jobs,
    plannedWidth,
    (job) => job.width,
    gpus,
    (job) => epochSpeedups(classes.get(job.className)?.profile, job.statEpoch),
    (job) => now - job.submittedAt >= longWaitMs,
  );
  for (const job of jobs) job.queuedForBudget = !served.has(job) && plannedWidth(job) > 0;
  return (job) => served.get(job) ?? 0;
}
