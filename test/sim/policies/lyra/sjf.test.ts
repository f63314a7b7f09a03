import { describe, expect, it } from 'vitest';
import { admitBases, type BaseDemand } from '../../../../src/sim/policies/lyra/sjf.ts';

const demand = (
  id: number,
  base: number,
  remaining: number,
  fields: Partial<BaseDemand> = {},
): BaseDemand => ({
  id,
  base,
  remaining,
  arrival: id,
  running: false,
  ...fields,
});

describe('admitBases', () => {
  it('admits waiting jobs shortest first while their bases fit', () => {
    const jobs = [demand(1, 2, 900), demand(2, 2, 100), demand(3, 2, 500), demand(4, 2, 300)];
    // 6 GPUs: the three shortest (2, 4, 3) get their 2 GPUs each; job 1 (900 s) waits.
    expect(admitBases(jobs, 6)).toEqual({ admitted: [2, 4, 3], free: 0 });
  });

  it('breaks ties by arrival, then id', () => {
    const jobs = [
      demand(5, 1, 100, { arrival: 20 }),
      demand(6, 1, 100, { arrival: 10 }),
      demand(4, 1, 100, { arrival: 20 }),
    ];
    expect(admitBases(jobs, 3).admitted).toEqual([6, 4, 5]);
  });

  it('skips a job whose base does not fit, so a shorter-base job behind it can start (backfill)', () => {
    const jobs = [demand(1, 4, 100), demand(2, 8, 200), demand(3, 2, 300)];
    // 8 GPUs: job 1 takes 4; job 2's 8 no longer fit; job 3's 2 do.
    expect(admitBases(jobs, 8)).toEqual({ admitted: [1, 3], free: 2 });
  });

  it("keeps a running job's base against a shorter arrival, unless preemptive", () => {
    const jobs = [demand(1, 4, 5000, { running: true }), demand(2, 4, 60)];
    expect(admitBases(jobs, 4)).toEqual({ admitted: [1], free: 0 });
    expect(admitBases(jobs, 4, true)).toEqual({ admitted: [2], free: 0 });
  });
});
