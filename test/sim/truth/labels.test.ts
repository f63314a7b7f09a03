import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { APP_SPECS } from '../../../src/sim/truth/apps.ts';
import { isolatedSeconds } from '../../../src/sim/truth/labels.ts';
import { loadAppTables } from '../../../src/sim/truth/load.ts';
import { createJobTruth, type JobTruth } from '../../../src/sim/truth/model.ts';

const DATA = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'data/pollux');

describe('isolatedSeconds', () => {
  // Found in review: a trace row asking num_replicas 100000 held every simulate run over two minutes
  // before its first tick, narrowing the request one width at a time to one a batch fits.
  it('skips the widths no batch fits at once: a request of 20000 GPUs costs no more than the widest one', () => {
    const truth = createJobTruth(loadAppTables(DATA, 'cifar10'), APP_SPECS.cifar10);
    let looks = 0;
    const counted: JobTruth = {
      ...truth,
      bestConfigInEpoch: (placement, epoch) => {
        looks++;
        return truth.bestConfigInEpoch(placement, epoch);
      },
    };
    const widest = Math.floor(APP_SPECS.cifar10.maxBatch / APP_SPECS.cifar10.minLocalBsz); // 128
    const atWidest = isolatedSeconds(counted, widest, 4);
    const looksAtWidest = looks;
    expect(Number.isFinite(atWidest)).toBe(true);
    looks = 0;
    expect(isolatedSeconds(counted, 20_000, 4)).toBe(atWidest);
    expect(looks).toBe(looksAtWidest);
    // One GPU wider, no batch fits: the same answer (the narrowing's) without looking past the widest.
    expect(isolatedSeconds(truth, widest + 1, 4)).toBe(atWidest);
  });
});
