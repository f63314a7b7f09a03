import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { APP_NAMES, APP_SPECS, type AppName } from '../../../src/sim/truth/apps.ts';
import { deriveClassProfile, secondsOnWidth, splitDataEpochs } from '../../../src/sim/truth/derive.ts';
import { loadAppTables } from '../../../src/sim/truth/load.ts';
import { createJobTruth, type JobTruth } from '../../../src/sim/truth/model.ts';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const DATA = path.resolve(repoRoot, 'data/pollux');

describe('splitDataEpochs', () => {
  it('cuts at the data-epoch boundaries nearest to equal progress shares', () => {
    const ends = Array.from({ length: 10 }, (_, i) => 10 * (i + 1));
    expect(splitDataEpochs(ends, 2)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
    expect(splitDataEpochs(ends, 4).map((g) => g.length)).toEqual([2, 3, 2, 3]);
    // Uneven progress: the first data epoch alone holds half of it.
    expect(splitDataEpochs([50, 60, 70, 80, 90, 100], 2)).toEqual([[0], [1, 2, 3, 4, 5]]);
  });

  it('gives one statistical epoch per data epoch when there are fewer data epochs', () => {
    expect(splitDataEpochs([5, 9], 8)).toEqual([[0], [1]]);
    // Never an empty group, even when one data epoch dwarfs the rest.
    expect(splitDataEpochs([1, 2, 100], 3)).toEqual([[0], [1], [2]]);
    expect(() => splitDataEpochs([1, 2], 0)).toThrow(/positive integer/);
  });
});

describe('on the measured traces', () => {
  const truths = new Map<AppName, JobTruth>(
    APP_NAMES.map((app) => [app, createJobTruth(loadAppTables(DATA, app), APP_SPECS[app])]),
  );
  const truth = (app: AppName) => truths.get(app) as JobTruth;
  const allEpochs = (app: AppName) => Array.from({ length: APP_SPECS[app].dataEpochs }, (_, e) => e);
  const hours = (app: AppName) => secondsOnWidth(truth(app), allEpochs(app), 1) / 3600;
  const derived = (app: AppName) => deriveClassProfile(app, truth(app)).profile;

  it('single-GPU job times match the README (bert 3.8 h, cifar10 1.0 h, deepspeech2 4.6 h, ...)', () => {
    expect(hours('cifar10')).toBeGreaterThan(0.75);
    expect(hours('cifar10')).toBeLessThan(1.25);
    const readme: [AppName, number][] = [
      ['bert', 3.8],
      ['cifar10', 1.0],
      ['deepspeech2', 4.6],
      ['yolov3', 9.4],
      ['imagenet', 148],
    ];
    for (const [app, h] of readme) expect(Math.abs(hours(app) / h - 1), app).toBeLessThan(0.05);
    expect(hours('ncf') * 3600).toBeLessThan(60);
  });

  it('bert is slightly superlinear on 2 GPUs (s(2) = 2.06 in its first epoch)', () => {
    const first = derived('bert').epochs[0];
    expect(first?.speedup['2']).toBeCloseTo(2.06, 2);
  });

  it('cifar10 early on is slower on 8 GPUs (2 nodes) than on 4', () => {
    const first = derived('cifar10').epochs[0]?.speedup ?? {};
    expect(first['8']).toBeLessThan(first['4'] as number);
  });

  it('speedups grow during training and large widths pay late (except where the max batch caps them)', () => {
    for (const app of ['bert', 'deepspeech2', 'imagenet', 'yolov3'] as const) {
      const epochs = derived(app).epochs;
      const first = epochs[0]?.speedup ?? {};
      const last = epochs[epochs.length - 1]?.speedup ?? {};
      expect(last['64'], app).toBeGreaterThan(last['16'] as number);
      // bert has only two data epochs and its s(16) dips slightly (10.26 -> 10.18): no growth to see.
      if (app !== 'bert') expect(last['16'], app).toBeGreaterThan(1.3 * (first['16'] as number));
    }
    // cifar10's max batch 4096 leaves 64 per GPU at 64 GPUs: there 64 GPUs stay slower than 16.
    const cifar = derived('cifar10').epochs;
    const last = cifar[cifar.length - 1]?.speedup ?? {};
    expect(last['64']).toBeLessThan(last['16'] as number);
    // ncf is fastest on one GPU throughout (Pollux pinned it to 1 replica).
    for (const e of derived('ncf').epochs) expect(Math.max(...Object.values(e.speedup))).toBeLessThan(1.3);
  });

  it('statistical epochs are whole data epochs and their work adds up to the job', () => {
    for (const app of APP_NAMES) {
      const { profile, epochs } = deriveClassProfile(app, truth(app));
      expect(
        epochs.flatMap((e) => e.dataEpochs),
        app,
      ).toEqual(allEpochs(app));
      expect(profile.epochs.length).toBe(Math.min(8, APP_SPECS[app].dataEpochs));
      const work = profile.epochs.reduce((s, e) => s + e.workSeconds, 0);
      expect(work / 3600 / hours(app), app).toBeCloseTo(1, 3);
    }
  });

  it('best configurations respect the app bounds at every width', () => {
    for (const app of APP_NAMES) {
      const spec = APP_SPECS[app];
      for (const k of [1, 3, 16, 20, 64]) {
        const placement = Array.from({ length: Math.ceil(k / 4) }, (_, i) => Math.min(4, k - 4 * i));
        const best = truth(app).bestConfigInEpoch(placement, spec.dataEpochs - 1);
        expect(best, `${app} k=${k}`).toBeDefined();
        if (best === undefined) continue;
        expect(best.totalBatch).toBeGreaterThanOrEqual(spec.initBatch);
        expect(best.totalBatch).toBeLessThanOrEqual(spec.maxBatch);
        expect(best.atomicBsz).toBeGreaterThanOrEqual(spec.minLocalBsz);
        expect(best.atomicBsz).toBeLessThanOrEqual(spec.maxLocalBsz);
      }
    }
  });
});
