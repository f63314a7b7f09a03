import fc from 'fast-check';
import type { Instance, PlanningClass } from '../../src/core/instance.ts';

const WIDTHS = [1, 2, 3, 4, 6, 8];

/** Random small planning instances: any positive speedups (even non-monotone), s(1) = 1. */
export function arbitraryInstance(
  maxClasses = 3,
  maxEpochs = 4,
  maxWidths = WIDTHS.length,
): fc.Arbitrary<Instance> {
  const epoch = (widths: number[]) =>
    fc
      .record({
        workSeconds: fc.double({ min: 10, max: 20_000, noNaN: true }),
        gains: fc.array(fc.double({ min: 0.8, max: 1.9, noNaN: true }), {
          minLength: widths.length,
          maxLength: widths.length,
        }),
      })
      .map(({ workSeconds, gains }) => {
        // Each listed width multiplies the previous speedup by a random gain: flat, dipping or superlinear.
        const speedups = [1];
        for (let i = 1; i < widths.length; i++) {
          const next = (speedups[i - 1] as number) * (gains[i] as number);
          speedups.push(Math.min(1.1 * (widths[i] as number), Math.max(0.2, next)));
        }
        return { workSeconds, widths, speedups };
      });
  const cls = fc
    .record({
      widthCount: fc.integer({ min: 1, max: maxWidths }),
      epochs: fc.integer({ min: 1, max: maxEpochs }),
      ratePerHour: fc.double({ min: 0.1, max: 30, noNaN: true }),
      weight: fc.constantFrom(1, 1, 2, 0.5),
      rescaleSeconds: fc.constantFrom(0, 30, 120, 600),
    })
    .chain(({ widthCount, epochs, ...rest }) =>
      fc
        .array(epoch(WIDTHS.slice(0, widthCount)), { minLength: epochs, maxLength: epochs })
        .map((list): PlanningClass => ({ name: 'c', ...rest, epochs: list })),
    );
  return fc
    .array(cls, { minLength: 1, maxLength: maxClasses })
    .map((classes) => ({ classes: classes.map((c, i) => ({ ...c, name: `c${i}` })) }));
}

/** Every fixed-width plan of one class: the cartesian product of its epochs' widths. */
export function allWidthChoices(cls: PlanningClass): number[][] {
  let out: number[][] = [[]];
  for (const epoch of cls.epochs) out = out.flatMap((prefix) => epoch.widths.map((k) => [...prefix, k]));
  return out;
}
