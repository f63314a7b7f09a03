/**
 * The simulator scripts' number flags read decimal only, as the boa CLI and the trace loader do:
 * Number() also reads 0x10, 0b11 and 0o7, and `compare --budgets 0x10` ran at a budget of 16.
 */
import { describe, expect, it } from 'vitest';
import { parseBudgets } from '../../scripts/lib/budgets.ts';
import { relativeList } from '../../scripts/lib/compare-relative.ts';
import { numberOption, parseMix, seedOption } from '../../scripts/lib/sim-args.ts';

describe('number flags of simulate, compare and gen-trace', () => {
  it.each(['0x10', '0b11', '0o7'])('refuses %s, naming the flag and what is allowed', (text) => {
    expect(() => numberOption(text, '--tick', { min: 0, exclusiveMin: true })).toThrow(
      `--tick must be a number > 0, got "${text}"`,
    );
    expect(() => seedOption(text)).toThrow(/--seed must be an integer from 0 to/);
    expect(() => parseMix(`cifar10:${text}`)).toThrow(/--mix: "cifar10:.*" is not app:percent/);
    expect(() => parseBudgets(text)).toThrow(/budget: ".*" is not a positive number of GPU-hours per hour/);
    expect(() => parseBudgets(`1:${text}:1`)).toThrow(/budget range: ".*" is not a positive number/);
    expect(() =>
      relativeList(
        `${text}x`,
        () => 10,
        () => [],
      ),
    ).toThrow(/a multiple of the minimum feasible budget is a positive number then x/);
  });

  it('still reads decimals as written: signs, a bare point, exponents, spaces around', () => {
    expect(numberOption('.5', '--tick')).toBe(0.5);
    expect(numberOption('1e3', '--tick')).toBe(1000);
    expect(numberOption(' 8 ', '--tick')).toBe(8);
    expect(seedOption('7')).toBe(7);
    expect(parseMix('cifar10:50.5,bert:1e1')).toEqual({ cifar10: 50.5, bert: 10 });
    expect(parseBudgets('4:8:2')).toEqual({ kind: 'list', budgets: [4, 6, 8] });
    expect(parseBudgets('8, 10')).toEqual({ kind: 'list', budgets: [8, 10] });
  });
});
