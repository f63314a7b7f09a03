import { describe, expect, it } from 'vitest';
import { backWithinBudget, type PaidSpan } from '../../src/core/back-within-budget.ts';

const H = 3_600_000;
const NOW = 1000 * H;
const W = 24 * H;
/** Spans in hours before now: [from, to, gpus]. */
const spans = (...list: Array<[number, number, number]>): PaidSpan[] =>
  list.map(([from, to, gpus]) => ({ start: NOW + from * H, end: NOW + to * H, gpus }));
const input = (paid: PaidSpan[], budget: number, paidNow: number, floor = 0) => ({
  now: NOW,
  windowMs: W,
  floor,
  paid,
  budgets: [{ gpuHoursPerHour: budget, setAt: 0 }],
  paidNow,
});

describe('back within the budget', () => {
  it('counts the burst leaving the window, not only the room the paid rate leaves', () => {
    // 40 GPUs for the window's first 6 h, 10 since, budget 15: 60 GPU-hours over. The burst leaves at
    // 25 over the budget an hour and the rate now adds 5 of room: 2 h, where 60 / 5 would say 12.
    const result = backWithinBudget(input(spans([-24, -18, 40], [-18, 0, 10]), 15, 10));
    expect(result).toEqual({ kind: 'at', at: NOW + 2 * H });
  });

  it('says within when the paid average is at or below the window budget', () => {
    expect(backWithinBudget(input(spans([-24, 0, 15]), 15, 15))).toEqual({ kind: 'within' });
    expect(backWithinBudget(input(spans([-24, 0, 10]), 15, 40))).toEqual({ kind: 'within' });
  });

  it('says not at the current rate when the rate now is above the budget', () => {
    expect(backWithinBudget(input(spans([-24, 0, 20]), 15, 16))).toEqual({ kind: 'not-at-current-rate' });
  });

  it('waits for a burst to leave when the rate now is the budget exactly', () => {
    // 40 GPUs for the window's first 4 h, 10 since, budget 10: 120 over. Paying the budget adds
    // nothing over; the burst leaves within its 4 h (30 over an hour).
    expect(backWithinBudget(input(spans([-24, -20, 40], [-20, 0, 10]), 10, 10))).toEqual({
      kind: 'at',
      at: NOW + 4 * H,
    });
  });

  it('holds the window to each budget for its hours: a cut paid down to is within', () => {
    // 40 until 6 h ago, then 4, and paid so: nothing over, though 13 GPUs average above the new 4.
    const result = backWithinBudget({
      ...input(spans([-30, -6, 40], [-6, 0, 4]), 40, 4),
      budgets: [
        { gpuHoursPerHour: 40, setAt: 0 },
        { gpuHoursPerHour: 4, setAt: NOW - 6 * H },
      ],
    });
    expect(result).toEqual({ kind: 'within' });
  });

  it('after a cut, waits for the hours paid above the new budget to leave', () => {
    // Budget 40 until 6 h ago, 4 since; paid 40 until 2 h ago, 0 since: the 4 h at 40 after the cut
    // are 144 GPU-hours over, the last 2 h 8 under: 136. Paid 0 now gains 4 an hour while the 18 h
    // at 40 under budget 40 leave (136 / 4 = 34 h would pass the window's turn), then 40 an hour as
    // the over hours leave.
    const result = backWithinBudget({
      ...input(spans([-30, -2, 40]), 4, 0),
      budgets: [
        { gpuHoursPerHour: 40, setAt: 0 },
        { gpuHoursPerHour: 4, setAt: NOW - 6 * H },
      ],
    });
    // Over at 18 h: 136 - 18 * 4 = 64; then 40 an hour: 64 / 40 = 1.6 h more.
    expect(result).toEqual({ kind: 'at', at: NOW + 19.6 * H });
  });

  it('answers from when it stays within, not a dip before quiet hours leave the window', () => {
    // Budget 10, paid now 8: 70 for 2 h (120 over), nothing for 16 h (160 under), 30 for 6 h (120
    // over): 80 over. The first 2 h leave: -44 at 2 h. The quiet 16 h leave: 84 over at 18 h. Then the
    // last 6 h leave at 22 an hour: within from 18 + 84 / 22 h on.
    const result = backWithinBudget(input(spans([-24, -22, 70], [-6, 0, 30]), 10, 8));
    expect(result.kind).toBe('at');
    expect((result as { at: number }).at).toBe(Math.ceil(NOW + (18 + 84 / 22) * H));
  });

  it('keeps a young window starting at the floor until it is a window long', () => {
    // Started 10 h ago: 40 GPUs for 5 h, none since, budget 10: 100 over; paid 0 gains 10 an hour and
    // the start stays at the floor for 14 h more: 10 h.
    const result = backWithinBudget(input(spans([-10, -5, 40]), 10, 0, NOW - 10 * H));
    expect(result).toEqual({ kind: 'at', at: NOW + 10 * H });
  });

  it('refuses no budget or a window that is not positive', () => {
    expect(() => backWithinBudget({ ...input([], 10, 0), budgets: [] })).toThrow(/budgets/);
    expect(() => backWithinBudget({ ...input([], 10, 0), windowMs: 0 })).toThrow(/windowMs/);
  });
});
