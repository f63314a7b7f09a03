/**
 * Each arriving job's draw in [0, 1), made once: it picks the job's plan among its class's shares.
 * Draws are stratified per class (a golden-ratio sequence from a seeded random start), so the jobs of a
 * class split between a mixture's two plans in the planned shares from the first few jobs on; plain
 * random draws left an 85-job run a few percent off its mixture, as much as the calculators differ.
 */
import { unsafeSkipN, unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { nextDraw } from '../../../core/shares.ts';

const RESOLUTION = 2 ** 31;

export class StratifiedDraws {
  readonly #rng;
  readonly #next = new Map<string, number>();

  constructor(seed: number) {
    this.#rng = xoroshiro128plus(seed);
    // xoroshiro's first outputs from small seeds are nearly equal (seeds 1, 2, 3 all start near 1).
    unsafeSkipN(this.#rng, 64);
  }

  /** The next draw for a job of `app`. */
  draw(app: string): number {
    const current =
      this.#next.get(app) ?? unsafeUniformIntDistribution(0, RESOLUTION - 1, this.#rng) / RESOLUTION;
    this.#next.set(app, nextDraw(current, app));
    return current;
  }
}
