/**
 * A job's expected work left by its class profile, the key the spend ceiling serves waiting jobs by
 * (ceiling-widths.ts waitingOrder), computed the same way in the service and the simulator.
 */
import type { ClassProfile, EpochProfile } from './profile.ts';

/**
 * Expected 1-GPU seconds of work left: what is left of its statistical epoch's work by the profile (never
 * below 0), and the work of the epochs after it. Undefined without a profile: such a job is served
 * after those with one, in the jobs' order.
 */
export function workLeftSeconds(
  profile: ClassProfile | undefined,
  statEpoch: number,
  workDoneInEpochSeconds: number,
): number | undefined {
  const epochs = profile?.epochs;
  if (!epochs || epochs.length === 0) return undefined;
  if (statEpoch >= epochs.length) return 0;
  const epoch = Math.max(0, statEpoch);
  // Work reported past the epoch's profile does not shorten the epochs after it (found in review).
  const done = Number.isFinite(workDoneInEpochSeconds) ? Math.max(0, workDoneInEpochSeconds) : 0;
  let left = Math.max(0, (epochs[epoch] as EpochProfile).workSeconds - done);
  for (let index = epoch + 1; index < epochs.length; index++) {
    left += (epochs[index] as EpochProfile).workSeconds;
  }
  return left;
}

/**
 * The key the queue for the budget orders waiting jobs by: expected work left over the class's weight
 * (Smith's rule, the order that minimises the weighted sum of completion times on one machine; BOA's
 * objective is that weighted average JCT, model.md). With every weight 1, the least work left first.
 */
export function weightedWorkLeft(
  profile: ClassProfile | undefined,
  statEpoch: number,
  workDoneInEpochSeconds: number,
): number | undefined {
  const left = workLeftSeconds(profile, statEpoch, workDoneInEpochSeconds);
  return left === undefined ? undefined : left / (profile?.weight ?? 1);
}

/**
 * The work done in the job's statistical epoch from the fraction of its whole work done (what the
 * simulator's jobs report): that fraction of the profile's work, less the epochs before this one.
 */
export function workDoneInEpochFromFraction(
  profile: ClassProfile | undefined,
  statEpoch: number,
  fractionDone: number,
): number {
  const epochs = profile?.epochs ?? [];
  let total = 0;
  let before = 0;
  epochs.forEach((epoch, index) => {
    total += epoch.workSeconds;
    if (index < statEpoch) before += epoch.workSeconds;
  });
  return Math.max(0, fractionDone * total - before);
}
