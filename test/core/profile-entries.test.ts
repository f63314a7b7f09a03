/**
 * The bound on speedup-table entries (widths x statistical epochs, over all classes) a profiles file
 * may hold: the one `boa classes put` keeps (test/api/bounds.test.ts), said naming the class.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PROFILE_ENTRIES } from '../../src/core/profile-entries.ts';
import { parseProfileFile } from '../../src/core/profile.ts';

/** A class of `epochs` epochs, each listing widths 1..`widths` (sqrt speedups, within the format). */
const wideClass = (name: string, epochs: number, widths: number) => ({
  name,
  rescaleSeconds: 30,
  epochs: Array.from({ length: epochs }, () => ({
    workSeconds: 100,
    speedup: Object.fromEntries(Array.from({ length: widths }, (_, i) => [String(i + 1), Math.sqrt(i + 1)])),
  })),
});

const fileOf = (...classes: ReturnType<typeof wideClass>[]) => ({
  version: 1,
  instanceType: 'g4dn.12xlarge',
  gpusPerNode: 4,
  classes,
});

describe('a profiles file past the speedup-table bound', () => {
  it('is refused naming the file, the largest class, the total and the limit', () => {
    // 1000 epochs x 1024 widths: each within the format's own limits, minutes a plan.
    const file = fileOf(wideClass('small', 2, 8), wideClass('huge', 1000, 1024));
    expect(() => parseProfileFile(file, 'p.json')).toThrow(
      `invalid profile: p.json classes: the classes' speedup tables would hold 1024016 entries ` +
        `(widths x statistical epochs, over all classes; the largest huge: 1024000 over 1000 epochs, ` +
        `small: 16 over 2 epochs); at most ${MAX_PROFILE_ENTRIES} are kept`,
    );
  });

  it('counts every class: two within the bound alone are refused together, and the bound itself is kept', () => {
    // 100 epochs x 1000 widths: 100,000 entries each.
    const half = (name: string) => wideClass(name, 100, 1000);
    expect(parseProfileFile(fileOf(half('a'), half('b'))).classes).toHaveLength(2);
    expect(() => parseProfileFile(fileOf(half('a'), half('b'), wideClass('c', 1, 1)))).toThrow(
      /would hold 200001 entries .*; at most 200000 are kept/,
    );
  });
});
