/**
 * Cornucopia's resource allocator (its section 4.4), each round over the jobs in priority order (queue,
 * then arrival), starting from the widths they hold:
 * - Algorithm 2 (greedy allocation) deals the free GPUs. An interactive job (Queue 1) gets its full
 *   request, or every free GPU when fewer are left. In the lower queues, queue by queue, the next GPU goes
 *   to the job of that queue with the highest scaling factor S at its current width, one GPU at a time;
 *   a waiting job's first GPU comes before any job grows, no job grows past its profiled width (2 x its
 *   request), and a GPU that adds no throughput (S <= 0) is not given.
 * - Algorithm 3 (scaling-aware partial preemption): a job still short of its request takes any GPU left
 *   idle, then GPUs one at a time from the jobs of lower queues: the lowest queue first and, in it, the job whose last GPU has
 *   the lowest S (sub-linear before linear); among equals, the one with the most GPUs. A job loses its
 *   only GPU last. Queue 1 is never preempted.
 */
import { growthFactor, lastGpuFactor, type RampUpProfile } from './profiler.ts';
import type { QueueLevel } from './queues.ts';

export interface Contender {
  readonly id: number;
  readonly queue: QueueLevel;
  /** GPUs the user asked for, capped at the cluster's size. */
  readonly request: number;
  readonly profile: RampUpProfile;
  /** GPUs it holds now (0 while waiting). */
  readonly current: number;
}

/**
 * Widths per job id after Algorithms 2 and 3 (jobs left out get no GPU). `contenders` must be in
 * priority order and hold at most `gpus` GPUs between them.
 */
export function allocateWidths(contenders: readonly Contender[], gpus: number): Map<number, number> {
  const width = contenders.map((c) => Math.min(c.current, cap(c)));
  const held = width.reduce((sum, w) => sum + w, 0);
  const free = dealFree(contenders, width, Math.max(0, gpus - held));
  preemptForShortJobs(contenders, width, free);
  const widths = new Map<number, number>();
  contenders.forEach((c, j) => {
    if ((width[j] as number) > 0) widths.set(c.id, width[j] as number);
  });
  return widths;
}

/** Algorithm 2 on `free` GPUs; `width` is updated in place. Returns the GPUs left free. */
export function dealFree(contenders: readonly Contender[], width: number[], free: number): number {
  let left = free;
  for (const queue of [1, 2, 3] as const) {
    if (queue === 1) {
      contenders.forEach((c, j) => {
        if (c.queue !== 1 || left === 0) return;
        const more = Math.min(Math.max(0, c.request - (width[j] as number)), left);
        width[j] = (width[j] as number) + more;
        left -= more;
      });
      continue;
    }
    while (left > 0) {
      let best = -1;
      let bestFactor = 0;
      contenders.forEach((c, j) => {
        if (c.queue !== queue) return;
        const s = growthFactor(c.profile, width[j] as number);
        // Ties go to the earlier job (priority order).
        if (s > bestFactor) {
          best = j;
          bestFactor = s;
        }
      });
      if (best < 0) break;
      width[best] = (width[best] as number) + 1;
      left -= 1;
    }
  }
  return left;
}

/**
 * Algorithm 3 for every job short of its request, in priority order; `width` is updated in place. Idle
 * GPUs (`free`: those Algorithm 2 gave no one) are taken before any is revoked.
 */
export function preemptForShortJobs(contenders: readonly Contender[], width: number[], free = 0): void {
  let idle = free;
  // GPUs held per queue, so a job with nothing below it to take from costs no search.
  const held = [0, 0, 0, 0];
  contenders.forEach((c, j) => (held[c.queue] = (held[c.queue] as number) + (width[j] as number)));
  contenders.forEach((high, h) => {
    let need = high.request - (width[h] as number);
    const fromIdle = Math.max(0, Math.min(need, idle));
    width[h] = (width[h] as number) + fromIdle;
    held[high.queue] = (held[high.queue] as number) + fromIdle;
    idle -= fromIdle;
    need -= fromIdle;
    while (need > 0 && held.slice(high.queue + 1).some((g) => g > 0)) {
      const victim = pickVictim(contenders, width, high.queue);
      if (victim < 0) return;
      const from = (contenders[victim] as Contender).queue;
      width[victim] = (width[victim] as number) - 1;
      width[h] = (width[h] as number) + 1;
      held[from] = (held[from] as number) - 1;
      held[high.queue] = (held[high.queue] as number) + 1;
      need -= 1;
    }
  });
}

/** The job Algorithm 3 revokes a GPU from, among those in queues below `above`; -1 when none holds one. */
export function pickVictim(
  contenders: readonly Contender[],
  width: readonly number[],
  above: QueueLevel,
): number {
  let best = -1;
  let bestKey: [number, number, number] = [0, 0, 0];
  contenders.forEach((c, j) => {
    const w = width[j] as number;
    if (c.queue <= above || w === 0) return;
    // Lowest queue first, then lowest factor of its last GPU, then most GPUs; later jobs on full ties.
    const key: [number, number, number] = [-c.queue, lastGpuFactor(c.profile, w), -w];
    if (best < 0 || !lexLess(bestKey, key)) {
      best = j;
      bestKey = key;
    }
  });
  return best;
}

function lexLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as number) !== (b[i] as number)) return (a[i] as number) < (b[i] as number);
  }
  return false;
}

function cap(c: Contender): number {
  return c.queue === 1 ? Math.max(c.request, 0) : c.profile.maxWidth;
}
