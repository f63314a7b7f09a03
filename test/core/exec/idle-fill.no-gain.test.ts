/**
 * The idle fill by time saved (QUIET_FILL) never widens a job to a width that runs no faster: with no
 * rescale cost in the profile, "saves at least 20 restarts" asks for a saving of 0 s, and a job on 2 GPUs
 * whose table is flat from 2 to 4 was restarted on 4 for nothing, taking the node's idle GPUs from the
 * next job.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FILL,
  type FillCandidate,
  QUIET_FILL,
  fillIdleGpus,
} from '../../../src/core/exec/idle-fill.ts';
import type { ClassProfile } from '../../../src/core/profile.ts';

function cls(rescaleSeconds: number, speedup: Record<string, number>): ClassProfile {
  return { name: 'a', weight: 1, rescaleSeconds, epochs: [{ workSeconds: 100_000, speedup }] };
}

const job: FillCandidate = { id: 1, app: 'a', statEpoch: 0, progressFraction: 0, restarting: false };

describe('fillIdleGpus never widens a job for no speed', () => {
  it('leaves a job on 2 GPUs when 4 are no faster, a restart costing nothing by its profile', () => {
    const classes = new Map([['a', cls(0, { '1': 1, '2': 1.8, '4': 1.8 })]]);
    for (const options of [QUIET_FILL, DEFAULT_FILL]) {
      const out = fillIdleGpus(new Map([[1, [7, 7]]]), new Map([[7, 4]]), [job], classes, options);
      expect(out.get(1)).toEqual([7, 7]);
    }
  });

  it('still widens it where the wider width is faster, to the narrowest of the fastest', () => {
    const classes = new Map([['a', cls(0, { '1': 1, '2': 1.8, '3': 2.5, '4': 2.5 })]]);
    const out = fillIdleGpus(new Map([[1, [7, 7]]]), new Map([[7, 4]]), [job], classes, QUIET_FILL);
    expect(out.get(1)).toEqual([7, 7, 7]);
  });

  it('leaves a job on several nodes alone when its own nodes offer no faster width', () => {
    const classes = new Map([['a', cls(0, { '1': 1, '2': 1.8, '4': 3, '6': 3 })]]);
    const nodes = new Map([
      [7, 4],
      [8, 4],
    ]);
    const out = fillIdleGpus(new Map([[1, [7, 7, 8, 8]]]), nodes, [job], classes, QUIET_FILL);
    expect(out.get(1)).toEqual([7, 7, 8, 8]);
  });
});
