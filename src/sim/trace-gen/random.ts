/** A seeded uniform source for the generator (pure-rand's xoroshiro128+), 53-bit doubles. */
import { isSeed } from '../../core/seed.ts';
import { unsafeSkipN, unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';

export interface Uniform {
  /** Uniform in (0, 1]: never 0, so -log(u) is finite. */
  next(): number;
}

export function seededUniform(seed: number): Uniform {
  if (!isSeed(seed)) {
    throw new RangeError(`a seed must be an integer from 0 to 2^32 - 1, got ${seed}`);
  }
  const rng = xoroshiro128plus(seed);
  // The first outputs from small seeds are nearly equal across seeds: skip past them.
  unsafeSkipN(rng, 64);
  return {
    next: () => {
      const high = unsafeUniformIntDistribution(0, 2 ** 26 - 1, rng);
      const low = unsafeUniformIntDistribution(0, 2 ** 27 - 1, rng);
      return (high * 2 ** 27 + low + 1) / 2 ** 53;
    },
  };
}
