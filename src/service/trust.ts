/**
 * How far the service trusts what a job reports about its speed. A job's epoch durations become work
 * samples that move its class's estimate, so one misbehaving (or fake) job must not move everyone's
 * plan and spend:
 * - a sample more than IMPOSSIBLE_FACTOR times faster than the profile (less than profileWork / 3)
 *   is impossible for the class: dropped, and logged;
 * - every other sample counts clamped to [profileWork / INFLUENCE_FACTOR, profileWork x
 *   INFLUENCE_FACTOR]; with the profile worth 3 samples in the blend, one job's sample moves an
 *   epoch's estimate by at most a quarter up or an eighth down, and each job gives at most one sample
 *   per statistical epoch (the epoch it just finished).
 */
export const IMPOSSIBLE_FACTOR = 3;
export const INFLUENCE_FACTOR = 2;

export type SampleVerdict =
  | { readonly use: true; readonly workSeconds: number; readonly clamped: boolean }
  | { readonly use: false; readonly reason: string };

export function judgeWorkSample(profileWork: number, sample: number): SampleVerdict {
  if (!(Number.isFinite(sample) && sample >= 0)) return { use: false, reason: 'not a finite duration' };
  if (sample < profileWork / IMPOSSIBLE_FACTOR) {
    return {
      use: false,
      reason: `more than ${IMPOSSIBLE_FACTOR}x faster than the class profile (${sample.toFixed(1)} s of 1-GPU work against ${profileWork.toFixed(1)} s)`,
    };
  }
  const low = profileWork / INFLUENCE_FACTOR;
  const high = profileWork * INFLUENCE_FACTOR;
  const workSeconds = Math.min(high, Math.max(low, sample));
  return { use: true, workSeconds, clamped: workSeconds !== sample };
}
