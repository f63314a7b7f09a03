/**
 * The widths the spend ceiling allows the service's jobs this tick (core/ceiling-widths.ts, the rule the
 * simulator's boa runs too), each job marked so its view can say why it waits.
 */
import { type ServiceJob, plannedWidth } from './jobs.ts';
import type { ClassProfiles } from './profiles-in-use.ts';
import {
  DEFAULT_QUEUE_OVERDUE_HOURS,
  type QueueOrder,
  ceilingWidthsInOrder,
} from '../core/ceiling-widths.ts';
import { type SpeedupTable, epochSpeedups } from '../core/profile.ts';
import { weightedWorkLeft } from '../core/work-left.ts';
import { ReusedColumn } from '../core/reused-column.ts';

// The jobs' columns, kept across ticks (core/reused-column.ts): every call writes each element it reads.
const plannedColumn = new ReusedColumn((length) => new Float64Array(length));
const runningColumn = new ReusedColumn((length) => new Uint8Array(length));
const currentColumn = new ReusedColumn((length) => new Float64Array(length));
const weightColumn = new ReusedColumn((length) => new Float64Array(length));
const workLeftColumn = new ReusedColumn((length) => new Float64Array(length));
const overdueColumn = new ReusedColumn((length) => new Uint8Array(length));
/** Each job's speedup table: objects, so a plain array, longer than the jobs when fewer than before. */
const tablesColumn: (SpeedupTable | undefined)[] = [];

/**
 * Planned widths within `gpus` (the ceiling): when they do not all fit, jobs are narrowed by price
 * (core/narrowing.ts: the GPUs that buy the least speed first) before any waits, then jobs beyond what
 * `gpus` can hold wait for the budget (running jobs first, then those waiting past `queue.overdueMs`
 * since their submission, oldest first, then the least expected work left per unit of the class's weight
 * first, core/work-left.ts; or all by submission: config queueOrder, queueOverdueHours); each job is
 * marked so its view can say why it waits, and numbered in the queue (budgetQueuePlace). A job that has waited `longWaitMs` since its submission (`now`, ms; the setting
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
  // (what widthsUnderCeiling gives then, without a map of every job each tick). The planned widths are
  // kept for the ticks it does not fit, which then read no job's plan twice.
  const count = jobs.length;
  const widths = plannedColumn.of(count);
  let planned = 0;
  for (let index = 0; index < count; index++) {
    const job = jobs[index] as ServiceJob;
    job.queuedForBudget = false;
    job.narrowedByBudget = false;
    const width = plannedWidth(job);
    widths[index] = width;
    planned += width;
  }
  if (planned <= Math.floor(gpus + 1e-9)) return plannedWidth;
  // The jobs' columns in one pass (widthsUnderCeiling's, read once instead of a map per column).
  const running = runningColumn.of(count);
  const current = currentColumn.of(count);
  const tables = tablesColumn;
  const weights = weightColumn.of(count);
  const byWork = queue.order === 'least-work-left';
  const workLeft = workLeftColumn.of(byWork ? count : 0);
  const overdue = overdueColumn.of(byWork ? count : 0);
  for (let index = 0; index < count; index++) {
    const job = jobs[index] as ServiceJob;
    const runs = job.state === 'running';
    running[index] = runs ? 1 : 0;
    // The width it is booked at: GPUs the idle fill lent are not the budget's (idle-fill.ts).
    current[index] = runs ? job.width - job.idleFillGpus : 0;
    const profile = classes.get(job.className)?.profile;
    tables[index] = epochSpeedups(profile, job.statEpoch);
    weights[index] = profile?.weight ?? 1;
    if (byWork) {
      workLeft[index] =
        weightedWorkLeft(profile, job.statEpoch, job.workDoneSeconds) ?? Number.POSITIVE_INFINITY;
      overdue[index] = now - job.submittedAt >= queue.overdueMs ? 1 : 0;
    }
  }
  const { widths: served, order } = ceilingWidthsInOrder(
    { running, planned: widths, current, tables, weights, ...(byWork ? { workLeft, overdue } : {}) },
    gpus,
    (index) => now - (jobs[index] as ServiceJob).submittedAt >= longWaitMs,
  );
  // `gpus` the node group's maximum, not the budget: its jobs wait for GPUs, not for the budget. Both
  // marks were cleared above: only the few jobs marked are written (a write to each of 1,000 jobs, their
  // objects cold by now, was a measurable part of the tick).
  if (byBudget) {
    let queued = 0;
    for (let index = 0; index < count; index++) {
      const width = served[index] as number;
      const plan = widths[index] as number;
      if (width === 0 && plan > 0) {
        (jobs[index] as ServiceJob).queuedForBudget = true;
        queued++;
      } else if (width > 0 && width < plan) (jobs[index] as ServiceJob).narrowedByBudget = true;
    }
    if (queued > 0) placeInQueue(jobs, order);
  }
  return widthIn(jobs, served);
}

/**
 * Numbers the jobs queued for the budget in the order the ceiling served the waiting ones (`order`,
 * ceilingWidthsInOrder's), so a job's view can say where it stands: "queued" alone left a user of a
 * long queue guessing whether it was next or hours away.
 */
function placeInQueue(jobs: readonly ServiceJob[], order: Int32Array): void {
  let place = 0;
  for (const index of order) {
    const job = jobs[index] as ServiceJob;
    if (job.queuedForBudget) job.budgetQueuePlace = ++place;
  }
}

/**
 * The width of each job from widths aligned with `jobs`. Callers ask in the jobs' order (placement,
 * the drain), so the next job's index is tried first: no map of every job each tick. Then the job
 * just asked for: placement asks a lent job's width twice (its kept width reads it again), and a
 * search from the start for each cost about 20 scans of 1,000 jobs a tick past the budget window.
 * Then the jobs after the last one asked for: the idle fill asks in order but skips the jobs not
 * placed, and a search from the start for each made its pass quadratic in the queue (bench:tick
 * --jobs 10000, docs/benchmarks.md).
 */
function widthIn(jobs: readonly ServiceJob[], widths: ArrayLike<number>): (job: ServiceJob) => number {
  let next = 0;
  return (job) => {
    const index = jobs[next] === job ? next : jobs[next - 1] === job ? next - 1 : indexFrom(jobs, job, next);
    next = index + 1;
    return index < 0 ? 0 : (widths[index] as number);
  };
}

/** The job's index, looked for from `from` on first, then before it; -1: not among `jobs`. */
function indexFrom(jobs: readonly ServiceJob[], job: ServiceJob, from: number): number {
  const after = jobs.indexOf(job, from);
  return after >= 0 ? after : jobs.lastIndexOf(job, from - 1);
}
