import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { jobCost, LATE_WEIGHT } from '../../../../src/sim/policies/cuckoo/cost.ts';
import { RemainingTime } from '../../../../src/sim/policies/common/remaining.ts';
import { REPO } from '../../../helpers/run-script.ts';
import { jobView } from '../fakes.ts';
import { PROFILES } from '../ones/fakes.ts';

describe('the lateness cost', () => {
  const model = new RemainingTime(PROFILES.classes, 'hull');

  it('is completion time plus a penalty per second late, in units of the job allowance', () => {
    // Waiting `lin` job that arrived at 0: 30 s restart + 300 / w s; deadline 100 s from now (and arrival).
    const { cost, slack, fastest } = jobCost(jobView(1), 0, 100, 8, model, 30);
    expect(cost[0]).toBe(Number.POSITIVE_INFINITY);
    expect(cost[1]).toBeCloseTo((330 + LATE_WEIGHT * 230) / 100);
    expect(cost[4]).toBeCloseTo((105 + LATE_WEIGHT * 5) / 100);
    expect(cost[8]).toBeCloseTo(67.5 / 100);
    expect(fastest).toBeCloseTo(67.5);
    expect(slack).toBeCloseTo(100 - 67.5);
    // Running at its width already: no restart to pay. Given 200 s instead, each second counts half.
    const running = jobCost(jobView(1, { allocation: [0, 0, 0, 0], rescales: 1 }), 0, 200, 8, model, 30);
    expect(running.cost[4]).toBeCloseTo(75 / 200);
  });

  it('drops the penalty once the deadline is out of reach', () => {
    // Deadline 50 s from now: even 8 GPUs (67.5 s) miss it.
    const { cost, slack } = jobCost(jobView(1), 0, 50, 8, model, 30);
    expect(slack).toBeCloseTo(50 - 67.5);
    expect(cost[1]).toBeCloseTo(330 / 50);
    expect(cost[8]).toBeCloseTo(67.5 / 50);
  });

  it('is convex in width for every class and epoch of the real profiles (what makes the assignment exact)', () => {
    const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
    const real = new RemainingTime(profiles.classes, 'hull');
    for (const cls of profiles.classes) {
      cls.epochs.forEach((_, e) => {
        for (const [now, due] of [
          [0, 1e9],
          [0, 0],
          [0, 3000],
        ] as const) {
          const job = jobView(1, {
            app: cls.name,
            statEpoch: e,
            progressFraction: (e + 0.5) / cls.epochs.length,
          });
          const { cost } = jobCost(job, now, due, 64, real, 30);
          for (let w = 2; w < 64; w++) {
            const before = (cost[w - 1] as number) - (cost[w] as number);
            const after = (cost[w] as number) - (cost[w + 1] as number);
            expect(after, `${cls.name} epoch ${e} at ${w}`).toBeLessThanOrEqual(
              before + 1e-6 * (cost[1] as number),
            );
          }
        }
      });
    }
  });
});
