import type { SpeedupTable } from '../core/profile.ts';

/**
 * One clean epoch's 1-GPU work (progress.ts recordWorkSample): its duration x the profile's speedup at
 * the width it ran at, kept with that width so the class's speedups can be learned (learned-speedups.ts).
 * A plain number is a sample stored before 2026-12-01, when the width was not kept: it still counts for
 * the work, at an unknown width.
 */
export type WorkSample = number | { readonly workSeconds: number; readonly width: number };

export const sampleWork = (sample: WorkSample): number =>
  typeof sample === 'number' ? sample : sample.workSeconds;

export const sampleWidth = (sample: WorkSample): number | undefined =>
  typeof sample === 'number' ? undefined : sample.width;

/**
 * A sample under a replaced speedup table: its duration times the new speedup at its width, as a new
 * sample would be. Kept as it was, a table corrected to what jobs showed would be corrected again. A
 * width the new table lacks leaves the work as measured, at an unknown width.
 */
export function underTable(sample: WorkSample, before: SpeedupTable, after: SpeedupTable): WorkSample {
  const width = sampleWidth(sample);
  if (width === undefined) return sample;
  const [was, is] = [before[String(width)], after[String(width)]];
  if (was === undefined || is === undefined) return sampleWork(sample);
  return was === is ? sample : { workSeconds: (sampleWork(sample) / was) * is, width };
}

/**
 * Drops samples, oldest first, from the width with the most, until at most `max` are kept. Dropped
 * oldest first whatever the width, a corrected width's samples aged out once the plan stopped giving
 * it: the table went back to the profile's, the plan gave that width again, and the correction came
 * back three jobs later, over and over (found in review). Kept in place (the class's list).
 */
export function trimSamples(samples: WorkSample[], max: number): void {
  while (samples.length > max) {
    const counts = new Map<number | undefined, number>();
    for (const sample of samples) counts.set(sampleWidth(sample), (counts.get(sampleWidth(sample)) ?? 0) + 1);
    const most = Math.max(...counts.values());
    // The oldest sample of a width with the most.
    const index = samples.findIndex((sample) => counts.get(sampleWidth(sample)) === most);
    samples.splice(index, 1);
  }
}
