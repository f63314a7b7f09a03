import { describe, expect, it } from 'vitest';
import { tablesFromCsv } from '../../../src/sim/truth/load.ts';
import { buildStatsModel } from '../../../src/sim/truth/stats.ts';

const HEADER = 'progress,iteration,metric,grad_sqr,grad_var\n';
const tables = tablesFromCsv(
  'placement,local_bsz,step_time,sync_time\n1,1,1,0\n',
  undefined,
  new Map([
    // Listed out of order on purpose: tables are sorted by batch size.
    [40, `${HEADER}95,20,0,2,10\n205,40,0,4,30\n300,60,0,1,1\n`],
    [10, `${HEADER}100,100,0,1,2\n200,200,0,3,6\n310,310,0,1,1\n`],
  ]),
);

describe('data epochs', () => {
  const stats = buildStatsModel(tables, 2);

  it('end at the minimum progress over batch sizes, up to the job length', () => {
    expect(stats.epochEnds).toEqual([95, 200]);
  });

  it('locate a progress value; reaching an end starts the next epoch; done stays in the last', () => {
    expect(stats.epochAt(0)).toBe(0);
    expect(stats.epochAt(94.9)).toBe(0);
    expect(stats.epochAt(95)).toBe(1);
    expect(stats.epochAt(199)).toBe(1);
    expect(stats.epochAt(1e9)).toBe(1);
  });

  it('refuse more data epochs than the tables have', () => {
    expect(() => buildStatsModel(tables, 4)).toThrow(/has 3 rows, need 4/);
  });
});

describe('gradient statistics', () => {
  const stats = buildStatsModel(tables, 3);

  it('are the measured row at a measured batch size', () => {
    expect(stats.gradStats(10, 0)).toEqual({ sqr: 1, var: 2 });
    expect(stats.gradStats(40, 1)).toEqual({ sqr: 4, var: 30 });
  });

  it('are linear in the batch size between measured sizes', () => {
    const mid = stats.gradStats(20, 1); // a third of the way from 10 to 40
    expect(mid.sqr).toBeCloseTo(3 + (4 - 3) / 3, 12);
    expect(mid.var).toBeCloseTo(6 + (30 - 6) / 3, 12);
  });

  it('are clamped outside the measured sizes', () => {
    expect(stats.gradStats(5, 0)).toEqual({ sqr: 1, var: 2 });
    expect(stats.gradStats(400, 0)).toEqual({ sqr: 2, var: 10 });
  });

  it('exist only for the job data epochs', () => {
    expect(() => stats.gradStats(10, 3)).toThrow(/no data epoch 3/);
  });
});
