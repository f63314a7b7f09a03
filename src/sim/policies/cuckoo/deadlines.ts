/**
 * Each job's deadline: arrival + f x its fastest execution time, the time the whole job takes from its
 * profile at its best width (no queueing, no restarts). f is drawn per job from N(8, 2), as the brief
 * for this baseline asks, and clipped below at 2 so that no deadline is hopeless from the start (the
 * clip moves about 0.1% of draws). Each draw depends only on (seed, job id): which other jobs a run has
 * does not change a job's deadline, and the same seed gives the same deadlines.
 */
import { unsafeSkipN, unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';

export const DEADLINE_MEAN = 8;
export const DEADLINE_SD = 2;
export const DEADLINE_FLOOR = 2;

/** A 32-bit mix of the run's seed and the job id (murmur3's finaliser), so nearby ids draw apart. */
function mix(seed: number, jobId: number): number {
  let h = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(jobId | 0, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** Uniform in (0, 1] with 53 bits. */
function uniform(rng: ReturnType<typeof xoroshiro128plus>): number {
  const high = unsafeUniformIntDistribution(0, 2 ** 26 - 1, rng);
  const low = unsafeUniformIntDistribution(0, 2 ** 27 - 1, rng);
  return (high * 2 ** 27 + low + 1) / 2 ** 53;
}

/** The job's deadline factor f ~ N(8, 2), at least 2 (Box-Muller on the job's own stream). */
export function deadlineFactor(seed: number, jobId: number): number {
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(jobId)) {
    throw new RangeError(`a seed and a job id must be integers, got ${seed} and ${jobId}`);
  }
  const rng = xoroshiro128plus(mix(seed, jobId));
  // xoroshiro's first outputs from nearby seeds are close: skip past them.
  unsafeSkipN(rng, 16);
  const normal = Math.sqrt(-2 * Math.log(uniform(rng))) * Math.cos(2 * Math.PI * uniform(rng));
  return Math.max(DEADLINE_FLOOR, DEADLINE_MEAN + DEADLINE_SD * normal);
}

/** Absolute deadline in simulated seconds. */
export function deadline(arrival: number, fastestSeconds: number, factor: number): number {
  return arrival + factor * fastestSeconds;
}
