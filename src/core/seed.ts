/**
 * Random seeds go to pure-rand's xoroshiro128+, which keeps 32 bits of them (seed 1 and 2^32 + 1 drew
 * the same): a seed is 0 to 2^32 - 1, each a different run.
 */
export const SEED_LIMIT = 2 ** 32;

export function isSeed(seed: number): boolean {
  return Number.isInteger(seed) && seed >= 0 && seed < SEED_LIMIT;
}
