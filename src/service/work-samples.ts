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
