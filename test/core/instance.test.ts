import { describe, expect, it } from 'vitest';
import { buildInstance } from '../../src/core/instance.ts';
import type { ProfileFile } from '../../src/core/profile.ts';

const profile: ProfileFile = {
  version: 1,
  instanceType: 'test',
  gpusPerNode: 4,
  classes: [
    {
      name: 'wide',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [
        { workSeconds: 100, speedup: { 1: 1, 4: 3, 16: 9 } },
        // Listed only at widths the cap excludes.
        { workSeconds: 100, speedup: { 16: 10, 32: 16 } },
      ],
    },
  ],
};

describe('buildInstance with a maximum width', () => {
  it('drops the widths above it, and keeps the narrowest of an epoch that lists none within it', () => {
    const [cls] = buildInstance(profile, { wide: 1 }, { maxWidth: 8 }).classes;
    expect(cls?.epochs.map((e) => e.widths)).toEqual([[1, 4], [16]]);
    expect(cls?.epochs.map((e) => e.speedups)).toEqual([[1, 3], [10]]);
  });

  it('keeps every width without one', () => {
    const [cls] = buildInstance(profile, { wide: 1 }).classes;
    expect(cls?.epochs.map((e) => e.widths)).toEqual([
      [1, 4, 16],
      [16, 32],
    ]);
  });
});
