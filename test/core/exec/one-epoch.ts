import type { ClassProfile } from '../../../src/core/profile.ts';

/** A class of one 10-hour epoch on 1 GPU with this speedup table; restarts cost 60 s. */
export function oneEpochClass(name: string, speedup: Record<number, number>): ClassProfile {
  return {
    name,
    weight: 1,
    rescaleSeconds: 60,
    epochs: [{ workSeconds: 36_000, speedup }],
  } as unknown as ClassProfile;
}

/** Barely speeds up: 1.05 at 2 GPUs. */
export const flat = oneEpochClass('flat', { 1: 1, 2: 1.05 });
