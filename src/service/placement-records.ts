/**
 * What the incremental placement (placement.ts) remembers of each job it placed, and the records' order
 * by job id that lets a pass find a job's record by walking alongside the jobs instead of a map lookup
 * per job. Apart from the pass because it is plain data and pure functions over it, with no node state.
 */

/** Where the placement put a job. */
export interface Placed {
  readonly id: number;
  /** The allocation array this placement was handed out as: another array means someone reset it. */
  allocation: readonly string[];
  readonly slots: readonly number[];
  /**
   * slots.length, kept beside it: every pass compares it with each job's width, and reading it from the
   * slots array, cold by the next tick, was a cache miss a job (bench:tick).
   */
  readonly gpus: number;
  /** The pass (tick) that last met the job. */
  seenAt: number;
}

/** A job a pass places anew: its width, the width it may keep (0: none) and where it runs now. */
export interface Unsettled {
  readonly id: number;
  readonly width: number;
  readonly kept: number;
  readonly current: readonly number[];
}

export function sameSlots(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The records held after a pass in id order, by id: the settled ones (met in id order) and those of
 * the jobs it placed (`unsettled`, in id order too, held now in `placed`). Departed jobs' records are
 * gone by then.
 */
export function mergedById(
  settled: readonly Placed[],
  unsettled: ReadonlyArray<{ id: number }>,
  placed: ReadonlyMap<number, Placed>,
): Placed[] {
  const merged: Placed[] = [];
  let i = 0;
  for (const job of unsettled) {
    const record = placed.get(job.id);
    if (record === undefined) continue;
    while (i < settled.length && (settled[i] as Placed).id < job.id) merged.push(settled[i++] as Placed);
    merged.push(record);
  }
  while (i < settled.length) merged.push(settled[i++] as Placed);
  return merged;
}
