/**
 * Which of a plan's mixture shares a job runs, and how its widths follow a newer plan: the same rules
 * in the service and the simulator. Every job draws a number in [0, 1) once; each plan's shares split
 * [0, 1) in order, so a re-plan moves a job to another share only when the boundary crosses its draw.
 */
import type { MixedPlan, Widths } from './plan.ts';

const GOLDEN = (Math.sqrt(5) - 1) / 2;

/**
 * A started job's width in its current statistical epoch changes with a newer plan only when the
 * plan moves it by this factor or more: every change is a restart.
 */
export const RELOCK_FACTOR = 2;

/** A job stored before draws existed: the golden-ratio sequence over job ids. */
export function drawForId(id: number): number {
  return (id * GOLDEN) % 1;
}

/**
 * The draw after `previous` in a class's sequence (a golden-ratio sequence: the jobs of a class split
 * between a mixture's plans in its shares from the first few jobs on, which random draws do not). The
 * first draw of a class comes from its name, so it is the same on every start.
 */
export function nextDraw(previous: number | undefined, className: string): number {
  if (previous === undefined) return startOf(className);
  return (previous + GOLDEN) % 1;
}

function startOf(className: string): number {
  // FNV-1a: a stable, well-spread start per class name.
  let hash = 0x811c9dc5;
  for (let i = 0; i < className.length; i++) {
    hash ^= className.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32;
}

/**
 * The widths for a job of `app` whose draw is `u`: the first share whose cumulative sum passes u.
 * Undefined when the plan has no widths for the class.
 */
export function widthsFor(plan: MixedPlan, app: string, u: number): Widths | undefined {
  const shares = plan[app];
  if (shares === undefined || shares.length === 0) return undefined;
  let sum = 0;
  for (const { share, widths } of shares) {
    sum += share;
    if (u < sum) return widths;
  }
  return (shares[shares.length - 1] as (typeof shares)[number]).widths;
}

/** The width of statistical epoch `epoch` (the last epoch's beyond the end). */
function widthAt(widths: Widths, epoch: number): number {
  return widths[Math.min(epoch, widths.length - 1)] ?? 0;
}

/** Whether a plan's width moved far enough from the one a job has to restart it at the new one. */
export function relocks(planned: number, had: number, factor = RELOCK_FACTOR): boolean {
  return planned >= had * factor || planned * factor <= had;
}

/**
 * A started job's widths under a newer plan: its later epochs take the plan's widths; its current
 * epoch keeps the width it had unless the plan moved that by RELOCK_FACTOR or more.
 */
export function followedWidths(planned: Widths, previous: Widths, epoch: number): number[] {
  const next = [...planned];
  if (next.length === 0 || previous.length === 0) return next;
  const had = widthAt(previous, epoch);
  if (!relocks(widthAt(next, epoch), had)) next[Math.min(epoch, next.length - 1)] = had;
  return next;
}
