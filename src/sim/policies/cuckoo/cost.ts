/**
 * What a job costs at each width: its estimated completion time from now plus a penalty for every
 * second past its deadline, C(w) = T(w) + LATE_WEIGHT x max(0, now + T(w) - deadline), where T(w) is
 * the run time left at w GPUs on the speedups' concave hull (plus a restart for a job that must start).
 * Convex in w, which the slot assignment needs. Slack is the time to spare at the job's widest width.
 * A job whose slack is negative cannot make its deadline any more: it drops the penalty and costs its
 * completion time only. Otherwise hopeless jobs outbid every job that can still make it, and under
 * load those miss in turn (EDF's domino effect under overload).
 */
import type { JobView } from '../../policy.ts';
import type { RemainingTime } from '../common/remaining.ts';

/** A second late costs this much more than a second of completion time (meeting deadlines comes first). */
export const LATE_WEIGHT = 10;

export interface JobCost {
  /** cost[w] for w = 1..hi; cost[0] is +Infinity (whether a job waits is admission's call). */
  readonly cost: Float64Array;
  /** Deadline - now - run time left at the widest width considered (negative: out of reach). */
  readonly slack: number;
  /** That run time left at the widest width (restart included for a waiting job). */
  readonly fastest: number;
}

export function jobCost(
  job: JobView,
  now: number,
  deadline: number,
  hi: number,
  model: RemainingTime,
  restartSeconds: number,
): JobCost {
  const start = job.allocation.length === 0 ? restartSeconds : 0;
  const fastest = start + model.seconds(job, hi);
  const slack = deadline - now - fastest;
  const weight = slack >= 0 ? LATE_WEIGHT : 0;
  // In units of the job's own allowance (deadline - arrival): a minute matters more to a job given
  // ten minutes than to one given ten hours.
  const scale = 1 / Math.max(1, deadline - job.arrival);
  const cost = new Float64Array(hi + 1);
  cost[0] = Number.POSITIVE_INFINITY;
  for (let w = 1; w <= hi; w++) {
    const t = start + model.seconds(job, w);
    cost[w] = scale * (t + weight * Math.max(0, now + t - deadline));
  }
  return { cost, slack, fastest };
}
