/**
 * Speedup curves from the class profiles, for the acceleration ratios: the monotone concave hull of the
 * job's current statistical epoch's speedup table. The greedy grows jobs from hull vertex to hull vertex
 * (a width under the hull is slower than mixing its neighbours, so it never stops there); listed widths
 * on a hull edge count as vertices.
 */
import { concaveHull, type HullPoint } from '../../../core/hull.ts';
import type { ClassProfile } from '../../../core/profile.ts';

export class CornucopiaProfileError extends Error {
  override name = 'CornucopiaProfileError';
}

export class AccelerationTable {
  readonly #hulls = new Map<string, readonly (readonly HullPoint[])[]>();

  constructor(classes: readonly ClassProfile[]) {
    for (const cls of classes) {
      this.#hulls.set(
        cls.name,
        cls.epochs.map((epoch) => {
          const widths = Object.keys(epoch.speedup).map(Number);
          // Points on a hull edge are kept: a linear table grows one GPU at a time, not in one jump.
          return concaveHull(
            widths,
            widths.map((w) => epoch.speedup[String(w)] as number),
            true,
          );
        }),
      );
    }
  }

  /** Hull vertices of the class's statistical epoch, ascending; the first is 1 GPU. */
  vertices(app: string, statEpoch: number): readonly HullPoint[] {
    const hulls = this.#hulls.get(app);
    if (hulls === undefined) {
      const known = [...this.#hulls.keys()].join(', ');
      throw new CornucopiaProfileError(`no profile for application "${app}"; the profiles have: ${known}`);
    }
    return hulls[Math.min(Math.max(0, statEpoch), hulls.length - 1)] as readonly HullPoint[];
  }
}
