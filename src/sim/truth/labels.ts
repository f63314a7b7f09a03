/**
 * Per-job attributes the traces may lack, derived the way the papers' evaluations did:
 * - kind (interactive or batch): Cornucopia labelled Helios jobs that failed within 20 minutes as
 *   interactive (its section 5.1, the threshold from the average runtime of each type). Our traces have
 *   no job status, so the rule here is the duration part of it: a job whose isolated runtime at its
 *   requested GPUs on t4 is at most 20 minutes is interactive, the rest batch.
 * - deadline: CUCKOO's Eq. 15, (deadline - arrival) / execution time ~ N(8, 2), the execution time
 *   being the job's fastest on any GPU type of the cluster (here: at its requested GPUs, packed).
 *   Factors are clipped below at 2 so no deadline is hopeless from the start (about 0.1% of draws).
 *   Each draw depends only on (seed, job id).
 */
import { unsafeSkipN, unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { JobTruth } from './model.ts';
import { packedPlacement } from './placement.ts';
import { secondsToProgress } from './progress.ts';

export type JobKind = 'interactive' | 'batch';
export const JOB_KINDS: readonly JobKind[] = ['interactive', 'batch'];

export const INTERACTIVE_SECONDS = 20 * 60;

export interface DeadlineSlack {
  readonly mean: number;
  readonly sd: number;
  /** Draws below this are raised to it. */
  readonly floor: number;
}

export const CUCKOO_SLACK: DeadlineSlack = { mean: 8, sd: 2, floor: 2 };

export function kindOf(isolatedSeconds: number, thresholdSeconds = INTERACTIVE_SECONDS): JobKind {
  return isolatedSeconds <= thresholdSeconds ? 'interactive' : 'batch';
}

/**
 * The whole job's seconds alone on `width` GPUs packed per node, with no restart, at `speed` times the
 * t4 rate. A width no batch fits is narrowed until one does (a request above the class's maximum).
 */
export function isolatedSeconds(truth: JobTruth, width: number, gpusPerNode: number, speed = 1): number {
  // Wider than this, not even the smallest per-GPU batch fits the class's largest batch (goodput.ts),
  // so the narrowing starts here: one width at a time from a trace's num_replicas of 100000 took minutes.
  const widest = Math.floor(truth.spec.maxBatch / truth.spec.minLocalBsz);
  for (let w = Math.max(1, Math.min(width, widest)); w >= 1; w--) {
    const seconds = secondsToProgress(truth, packedPlacement(w, gpusPerNode), 0, truth.totalProgress);
    if (Number.isFinite(seconds)) return seconds / speed;
  }
  return Number.POSITIVE_INFINITY;
}

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

/** The job's slack factor from N(mean, sd), at least the floor (Box-Muller on the job's own stream). */
export function slackFactor(seed: number, jobId: number, slack: DeadlineSlack = CUCKOO_SLACK): number {
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(jobId)) {
    throw new RangeError(`a seed and a job id must be integers, got ${seed} and ${jobId}`);
  }
  const rng = xoroshiro128plus(mix(seed, jobId));
  // xoroshiro's first outputs from nearby seeds are close: skip past them.
  unsafeSkipN(rng, 16);
  const normal = Math.sqrt(-2 * Math.log(uniform(rng))) * Math.cos(2 * Math.PI * uniform(rng));
  return Math.max(slack.floor, slack.mean + slack.sd * normal);
}
