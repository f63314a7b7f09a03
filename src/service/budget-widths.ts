/**
 * The widths the spend ceiling allows the service's jobs this tick (core/ceiling-widths.ts, the rule the
 * simulator's boa runs too), each job marked so its view can say why it waits.
 */
import { type ServiceJob, plannedWidth } from './jobs.ts';
import type { ClassProfiles } from './profiles-in-use.ts';
import { DEFAULT_QUEUE_OVERDUE_HOURS, type QueueOrder, ceilingWidths } from '../core/ceiling-widths.ts';
import { type SpeedupTable, epochSpeedups } from '../core/profile.ts';
import { workLeftSeconds } from '../core/work-left.ts';

/**
 * Planned widths within `gpus` (the ceiling): when they do not all fit, jobs are narrowed by price
 * (core/narrowing.ts: the GPUs that buy the least speed first) before any waits, then jobs beyond what
 * `gpus` can hold wait for the budget (running jobs first, then those waiting past `queue.overdueMs`
 * since their submission, oldest first, then the least expected work left first, core/work-left.ts; or
 * all by submission: config queueOrder, queueOverdueHours); each job is marked so its view can say why
 * it waits. A job that has waited `longWaitMs` since its submission (`now`, ms; the setting
 * keptWidthWaitMinutes) makes the widths running jobs keep above their narrowed ones give way.
 * `byBudget` false: `gpus` is the node group's maximum, below the budget's, and no job is marked.
 */
export function budgetLimitedWidths(
  jobs: readonly ServiceJob[],
  gpus: number,
  classes: ClassProfiles,
  now: number,
  longWaitMs: number,
  queue: { readonly order: QueueOrder; readonly overdueMs: number } = {
    order: 'least-work-left',
    overdueMs: DEFAULT_QUEUE_OVERDUE_HOURS * 3_600_000,
  },
  byBudget = true,
): (job: ServiceJob) => number {
  // Most ticks the plan fits under the ceiling: every job gets its planned width, none waits for it
  // (what widthsUnderCeiling gives then, without a map of every job each tick).
  let planned = 0;
  for (const job of jobs) {
    job.queuedForBudget = false;
    job.narrowedByBudget = false;
    planned += plannedWidth(job);
  }
  if (planned <= Math.floor(gpus + 1e-9)) return plannedWidth;
  // The jobs' columns in one pass (widthsUnderCeiling's, read once instead of a map per column), into
  // arrays of their final length: grown by push, they cost twice as much in the tick.
  const count = jobs.length;
  const running = new Array<boolean>(count);
  const widths = new Array<number>(count);
  const current = new Array<number>(count);
  const tables = new Array<SpeedupTable | undefined>(count);
  const weights = new Array<number>(count);
  const byWork = queue.order === 'least-work-left';
  const workLeft = new Array<number>(count);
  const overdue = new Array<boolean>(count);
  for (let index = 0; index < count; index++) {
    const job = jobs[index] as ServiceJob;
    const runs = job.state === 'running';
    running[index] = runs;
    widths[index] = plannedWidth(job);
    // The width it is booked at: GPUs the idle fill lent are not the budget's (idle-fill.ts).
    current[index] = runs ? job.width - job.idleFillGpus : 0;
    const profile = classes.get(job.className)?.profile;
    tables[index] = epochSpeedups(profile, job.statEpoch);
    weights[index] = profile?.weight ?? 1;
    if (byWork) {
      workLeft[index] =
        workLeftSeconds(profile, job.statEpoch, job.workDoneSeconds) ?? Number.POSITIVE_INFINITY;
      overdue[index] = now - job.submittedAt >= queue.overdueMs;
    }
  }
  const served = ceilingWidths(
    { running, planned: widths, current, tables, weights, ...(byWork ? { workLeft, overdue } : {}) },
    gpus,
    (index) => now - (jobs[index] as ServiceJob).submittedAt >= longWaitMs,
  );
  jobs.forEach((job, index) => {
    const width = served[index] as number;
    // `gpus` the node group's maximum, not the budget: its jobs wait for GPUs, not for the budget.
    job.queuedForBudget = byBudget && width === 0 && (widths[index] as number) > 0;
    job.narrowedByBudget = byBudget && width > 0 && width < (widths[index] as number);
  });
  return widthIn(jobs, served);
}

/**
 * The width of each job from widths aligned with `jobs`. Callers ask in the jobs' order (placement,
 * the drain), so the next job's index is tried first: no map of every job each tick.
 */
function widthIn(jobs: readonly ServiceJob[], widths: readonly number[]): (job: ServiceJob) => number {
  let next = 0;
  return (job) => {
    const index = jobs[next] === job ? next : jobs.indexOf(job);
    next = index + 1;
    return index < 0 ? 0 : (widths[index] as number);
  };
}
