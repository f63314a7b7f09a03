/**
 * Cornucopia's three-queue MLFQ. A job's queue is set by the GPU service it has attained (GPU-seconds
 * held so far), like Tiresias's discretised LAS, and by its label: interactive jobs enter the top queue,
 * batch jobs the middle one. Attained service only ever demotes.
 */
import type { ClassProfile } from '../../../core/profile.ts';

export type QueueLevel = 0 | 1 | 2;
export type JobLabel = 'interactive' | 'batch';

/** Demotion thresholds in attained GPU-seconds: Q0 below 1 GPU-hour, Q2 from 10 GPU-hours. */
export const QUEUE_THRESHOLDS: readonly [number, number] = [3600, 36_000];

/**
 * A class is interactive when its whole job takes at most 2 hours on one GPU by its profile (cifar10
 * about 1 h, ncf under a minute); bert, deepspeech2, yolov3 and imagenet (3.8 h to 148 h) are batch.
 */
export const INTERACTIVE_MAX_SECONDS = 2 * 3600;

export function labelOf(profile: ClassProfile): JobLabel {
  const seconds = profile.epochs.reduce((sum, e) => sum + e.workSeconds, 0);
  return seconds <= INTERACTIVE_MAX_SECONDS ? 'interactive' : 'batch';
}

export function queueOf(
  label: JobLabel,
  attainedGpuSeconds: number,
  thresholds: readonly [number, number] = QUEUE_THRESHOLDS,
): QueueLevel {
  const byService: QueueLevel =
    attainedGpuSeconds < thresholds[0] ? 0 : attainedGpuSeconds < thresholds[1] ? 1 : 2;
  const entry: QueueLevel = label === 'interactive' ? 0 : 1;
  return Math.max(byService, entry) as QueueLevel;
}
