import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { APP_SPECS } from '../../../src/sim/truth/apps.ts';
import { epochProgress, secondsOnWidth } from '../../../src/sim/truth/derive.ts';
import { loadAppTables } from '../../../src/sim/truth/load.ts';
import { createJobTruth } from '../../../src/sim/truth/model.ts';
import { advanceProgress, secondsToProgress } from '../../../src/sim/truth/progress.ts';

const DATA = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'data/pollux');
const truth = createJobTruth(loadAppTables(DATA, 'deepspeech2'), APP_SPECS.deepspeech2);
const all = Array.from({ length: 80 }, (_, e) => e);

describe('progress over time', () => {
  it('takes the per-data-epoch time to finish the whole job', () => {
    const whole = secondsToProgress(truth, [4, 4], 0, truth.totalProgress);
    expect(whole).toBeCloseTo(secondsOnWidth(truth, all, 8), 6);
    expect(advanceProgress(truth, [4, 4], 0, whole + 100)).toBe(truth.totalProgress);
  });

  it('crosses data-epoch boundaries at the new epoch goodput', () => {
    const goodput = (e: number) => truth.bestConfigInEpoch([4, 4], e)?.goodput as number;
    const e = all.findIndex((i) => i < 79 && Math.abs(goodput(i + 1) / goodput(i) - 1) > 0.01);
    expect(e).toBeGreaterThanOrEqual(0);
    const end = truth.epochEnds[e] as number;
    const start = end - 10;
    const seconds = 10 / goodput(e) + 50;
    const reached = end + 50 * goodput(e + 1);
    expect(advanceProgress(truth, [4, 4], start, seconds)).toBeCloseTo(reached, 9);
    expect(secondsToProgress(truth, [4, 4], start, reached)).toBeCloseTo(seconds, 9);
    expect(epochProgress(truth, e + 1)).toBeCloseTo((truth.epochEnds[e + 1] as number) - end, 12);
  });

  it('inverts: advancing by the time to a target reaches it', () => {
    for (const target of [1, 500, 12345.6, truth.totalProgress * 0.7]) {
      const s = secondsToProgress(truth, [4, 4, 4, 1], 0, target);
      expect(advanceProgress(truth, [4, 4, 4, 1], 0, s)).toBeCloseTo(target, 6);
    }
  });

  it('makes no progress where no batch fits (deepspeech2: 10 per GPU x 65 GPUs > 640)', () => {
    const wide = [...Array(16).fill(4), 1];
    expect(advanceProgress(truth, wide, 5, 1000)).toBe(5);
    expect(secondsToProgress(truth, wide, 5, 10)).toBe(Number.POSITIVE_INFINITY);
  });
});
