/**
 * The spend ceiling's narrowing prices GPUs by the tables the plan reads (found at merge: the plan read
 * speedups learned from the jobs, the narrowing and the below-budget split the profile's). Here
 * "mymodel" claims 7.5x on 8 GPUs and its jobs showed 4x; "other" scales as its table says, 6x on 8.
 */
import { afterEach, expect, it } from 'vitest';
import { budgetLimitedWidths } from '../../src/service/budget-widths.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { profilesInUse } from '../../src/service/profiles-in-use.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const WORK = 3600;
const epoch = (speedup8: number) => ({
  workSeconds: WORK,
  speedup: { '1': 1, '2': 1.9, '4': 3.6, '8': speedup8 },
});

function waiting(id: number, className: string): ServiceJob {
  return {
    id,
    className,
    state: 'waiting',
    widths: [8],
    statEpoch: 0,
    width: 0,
    submittedAt: 0,
  } as unknown as ServiceJob;
}

it('narrows first the job whose learned table says its last GPUs buy least', async () => {
  const s = await startService();
  cleanups.push(s.close);
  s.service.putClass({ name: 'mymodel', weight: 1, rescaleSeconds: 30, epochs: [epoch(7.5)] }, 0);
  s.service.putClass({ name: 'other', weight: 1, rescaleSeconds: 30, epochs: [epoch(6)] }, 0);
  // Three epochs at 4 GPUs as the table says, three at 8 as long as 4x makes them (1-GPU work read
  // against the table: the duration WORK / 4 times 7.5). Observed at 4 and 8, the table between 1 and 4
  // keeps its shape (at 1 and 8, 4 GPUs would read 2.4x, interpolated: learned-speedups.ts).
  const samples = (n: number, workSeconds: number, width: number) =>
    Array.from({ length: n }, () => ({ workSeconds, width }));
  s.service.state.classes.get('mymodel')!.workSamples[0] = [
    ...samples(3, WORK, 4),
    ...samples(3, (WORK / 4) * 7.5, 8),
  ];
  const profiles = profilesInUse(s.service);
  expect(profiles.get('mymodel')?.profile.epochs[0]?.speedup['8']).toBeCloseTo(4, 6);
  expect(profiles.get('mymodel')?.profile.epochs[0]?.speedup['4']).toBe(3.6);

  // Both planned 8, 12 GPUs allowed: 4 of mymodel's 8 GPUs add 0.4x, 4 of other's 2.4x.
  const jobs = [waiting(1, 'mymodel'), waiting(2, 'other')];
  const widthOf = budgetLimitedWidths(jobs, 12, profiles, 0, 3_600_000);
  expect(jobs.map(widthOf)).toEqual([4, 8]);
});
