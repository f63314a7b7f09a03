import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import type { PlanningClass, PlanningEpoch } from '../../instance.ts';

/** Glue factor per class: runs of g consecutive epochs share one width (Algorithm 1, step 1). */
export type GlueConfiguration = readonly number[];

/** Draws configurations: each class's g uniform in {1, 2, 4, ..., 2^floor(log2 l)}. Seeded, reproducible. */
export function drawGlueConfigurations(
  classes: readonly PlanningClass[],
  count: number,
  seed: number,
): GlueConfiguration[] {
  const rng = xoroshiro128plus(seed);
  const configurations: GlueConfiguration[] = [];
  for (let c = 0; c < count; c++) {
    configurations.push(
      classes.map((cls) => {
        const maxPower = Math.floor(Math.log2(cls.epochs.length));
        return 2 ** unsafeUniformIntDistribution(0, maxPower, rng);
      }),
    );
  }
  return configurations;
}

/** A run of glued epochs: the original epoch indices it covers and its merged speedup table. */
export interface SuperEpoch {
  readonly first: number;
  readonly count: number;
  readonly epoch: PlanningEpoch;
}

/**
 * Merges runs of g epochs. The merged speedup at k is sum x / sum (x / s(k)), which keeps the run's time
 * at every width; only widths every epoch of the run lists are kept.
 */
export function glueEpochs(cls: PlanningClass, g: number): SuperEpoch[] {
  const out: SuperEpoch[] = [];
  for (let first = 0; first < cls.epochs.length; first += g) {
    const run = cls.epochs.slice(first, first + g);
    const work = run.reduce((sum, e) => sum + e.workSeconds, 0);
    const widths = (run[0] as PlanningEpoch).widths.filter((k) => run.every((e) => e.widths.includes(k)));
    const speedups = widths.map((k) => {
      const seconds = run.reduce(
        (sum, e) => sum + e.workSeconds / (e.speedups[e.widths.indexOf(k)] as number),
        0,
      );
      return work / seconds;
    });
    out.push({ first, count: run.length, epoch: { workSeconds: work, widths, speedups } });
  }
  return out;
}
