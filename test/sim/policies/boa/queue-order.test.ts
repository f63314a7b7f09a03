/**
 * boa's queue for the budget on the measured truth: when the budget cannot run every job present, the
 * waiting jobs with the least expected work left start first (core/ceiling-widths.ts waitingOrder), not
 * the oldest, and the average wait and JCT fall.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);

describe('boa on workload-1 (cifar10, bert, deepspeech2) at a budget of 15, under its load', () => {
  const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'));
  const run = (queueOrder?: string) =>
    simulate({
      trace,
      apps: ['cifar10', 'bert', 'deepspeech2'],
      policy: 'boa',
      options: { budget: 15, ...(queueOrder ? { queueOrder } : {}) },
      profiles,
      truthOf,
    }).result;
  const byWork = run();
  const submitted = run('submitted');

  it('waits less and finishes sooner on average, least work left first, for about the same spend', () => {
    for (const r of [byWork, submitted]) expect(r.completed).toBe(85);
    // Measured: average queueing 1507 s against 2287 s, average JCT 5422 s against 6611 s, paid 22.9
    // and 22.6 GPU-hours an hour over the arrival span.
    expect(byWork.avgQueueSeconds).toBeLessThan(submitted.avgQueueSeconds * 0.8);
    expect(byWork.avgJctSeconds).toBeLessThan(submitted.avgJctSeconds * 0.9);
    expect(Math.abs(byWork.paidGpuHoursPerHour / submitted.paidGpuHoursPerHour - 1)).toBeLessThan(0.03);
  });
});
