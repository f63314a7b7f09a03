/**
 * Cornucopia's allocation, in passes over the jobs in priority order (queue, then arrival):
 * 1. admission: one GPU each, higher queues first, while GPUs last;
 * 2. priority growth: queue by queue, the next GPU goes to the job of that queue with the highest
 *    acceleration ratio, while that ratio is at least PRIORITY_RATIO (the GPU adds 10% speed or more);
 * 3. keep: a running job gets back the width it has now if it had more (up to its last hull vertex),
 *    while GPUs last (hysteresis: without it, every arrival, completion or epoch change re-dealt the
 *    spare GPUs among all jobs);
 * 4. leftovers: any job, highest ratio first (ties to the higher queue), while a GPU still speeds up
 *    someone.
 * A lower-queue job thus loses its extra GPUs only when a higher-queue job takes them in passes 1-2
 * (partial preemption: it is shrunk, not stopped), and is stopped only when the higher queues need every
 * GPU for admission.
 */
import { type HullPoint, hullSpeedupAt } from '../../../core/hull.ts';
import type { QueueLevel } from './queues.ts';

/** The next GPU must raise a job's speed by at least 10% to be given ahead of lower queues. */
export const PRIORITY_RATIO = 1.1;
/** Below this a step is no gain (profiles are measured, so allow for rounding). */
const NO_GAIN = 1 + 1e-9;

export interface Candidate {
  readonly id: number;
  readonly queue: QueueLevel;
  /** Hull vertices of its speedup curve, ascending, from 1 GPU. */
  readonly vertices: readonly HullPoint[];
  /** GPUs it holds now (0 while waiting). */
  readonly current: number;
}

/**
 * The step from `width` GPUs to the next hull vertex above it, rated per GPU:
 * (s(next) / s(width))^(1 / (next - width)), s read on the hull. Null at or past the last vertex.
 */
export function nextStep(
  vertices: readonly HullPoint[],
  width: number,
): { readonly width: number; readonly ratio: number } | null {
  const next = vertices.find((v) => v.width > width);
  if (next === undefined) return null;
  const from = hullSpeedupAt(vertices, width);
  return { width: next.width, ratio: (next.speedup / from) ** (1 / (next.width - width)) };
}

/**
 * Widths per job id (jobs left out get no GPUs). `candidates` must be in priority order; ties in
 * ratio go to the earlier one.
 */
export function allocateWidths(
  candidates: readonly Candidate[],
  gpus: number,
  priorityRatio = PRIORITY_RATIO,
): Map<number, number> {
  const width = candidates.map(() => 0);
  let free = gpus;
  candidates.forEach((c, j) => {
    if (free >= 1) {
      width[j] = 1;
      free -= 1;
    }
  });
  const grow = (eligible: (c: Candidate) => boolean, minRatio: number) => {
    for (;;) {
      let best = -1;
      let bestStep = { width: 0, ratio: minRatio };
      candidates.forEach((c, j) => {
        const w = width[j] as number;
        if (w === 0 || !eligible(c)) return;
        const step = nextStep(c.vertices, w);
        if (step === null || step.width - w > free) return;
        if (step.ratio > bestStep.ratio || (step.ratio === bestStep.ratio && best < 0)) {
          best = j;
          bestStep = step;
        }
      });
      if (best < 0) return;
      free -= bestStep.width - (width[best] as number);
      width[best] = bestStep.width;
    }
  };
  for (const queue of [0, 1, 2] as const) grow((c) => c.queue === queue, priorityRatio);
  candidates.forEach((c, j) => {
    const w = width[j] as number;
    // GPUs past the last vertex add nothing (the job's epoch changed): those are not kept.
    const keep = Math.min(c.current, (c.vertices[c.vertices.length - 1] as HullPoint).width);
    if (w > 0 && keep > w && keep - w <= free) {
      free -= keep - w;
      width[j] = keep;
    }
  });
  grow(() => true, NO_GAIN);
  const widths = new Map<number, number>();
  candidates.forEach((c, j) => {
    if ((width[j] as number) > 0) widths.set(c.id, width[j] as number);
  });
  return widths;
}
