import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../src/core/profile.ts';
import { resolveEngineConfig } from '../../../src/sim/engine/config.ts';
import { runSimulation } from '../../../src/sim/engine/engine.ts';
import { APP_SPECS, createJobTruth, loadAppTables, secondsToProgress } from '../../../src/sim/truth/index.ts';
import { POLLUX, REPO } from '../../helpers/run-script.ts';
import { greedyDecide, scriptedPolicy, traceJob } from './fakes.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truth = createJobTruth(loadAppTables(POLLUX, 'cifar10'), APP_SPECS.cifar10);

describe('a measured job in the engine', () => {
  it('runs as long as the truth says at its placement, which matches its profile', () => {
    const run = runSimulation({
      jobs: [traceJob('c', 0, 'cifar10')],
      truthOf: () => truth,
      profiles,
      policy: scriptedPolicy(greedyDecide(4), 'fixed'),
      options: { budget: 4 },
      traceRatesPerHour: { cifar10: 1 },
    });
    const work = secondsToProgress(truth, [4], 0, truth.totalProgress);
    expect(run.jobs[0]?.completedAt).toBeCloseTo(30 + work, 6);
    // The profile (rounded to 4-5 digits) predicts the same time on 4 GPUs.
    const cls = profiles.classes.find((c) => c.name === 'cifar10');
    const predicted = (cls?.epochs ?? []).reduce(
      (sum, e) => sum + e.workSeconds / (e.speedup['4'] as number),
      0,
    );
    expect(work / predicted).toBeCloseTo(1, 3);
  });
});

describe('engine configuration', () => {
  it('fills defaults and names a bad field', () => {
    expect(resolveEngineConfig().tickSeconds).toBe(60);
    expect(resolveEngineConfig({ bootSeconds: 0 }).bootSeconds).toBe(0);
    expect(() => resolveEngineConfig({ tickSeconds: 0 })).toThrow(/tickSeconds must be a positive number/);
    expect(() => resolveEngineConfig({ maxNodes: 2.5 })).toThrow(/maxNodes must be a positive integer/);
    expect(() => resolveEngineConfig({ releaseLagSeconds: -1 })).toThrow(
      /releaseLagSeconds must be a number of seconds >= 0/,
    );
  });
});
