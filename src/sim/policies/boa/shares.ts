/** Which of a class's plans a job runs: a uniform draw made once per job picks by the plan's shares. */
import type { MixedPlan, Widths } from '../../../core/plan.ts';

/**
 * The widths for a job of `app` whose draw is `u` in [0, 1): the first share whose cumulative sum
 * passes u. A job keeps its draw for life, so it keeps its plan unless a re-plan moves the boundary
 * across it. Undefined when the plan has no widths for the class.
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
