import { UsageError } from './inputs.ts';
import { decimalOrNaN } from './sim-args.ts';

/** Budgets to evaluate: explicit, a LO:HI:STEP range, or `count` points from lo to hi. */
export type BudgetSpec = { kind: 'list'; budgets: number[] } | { kind: 'default' };

const RANGE = /^([^:]+):([^:]+):([^:]+)$/;

export function parseBudgets(text: string | undefined): BudgetSpec {
  if (text === undefined) return { kind: 'default' };
  const range = RANGE.exec(text);
  if (range) {
    const [lo, hi, step] = range.slice(1).map((part) => positive(part as string, 'budget range'));
    if ((hi as number) < (lo as number)) throw new UsageError(`budget range ${text}: HI must be at least LO`);
    const count = Math.floor(((hi as number) - (lo as number)) / (step as number) + 1e-9) + 1;
    if (count > 10_000)
      throw new UsageError(`budget range ${text} has ${count} points; at most 10000 are allowed`);
    return {
      kind: 'list',
      budgets: Array.from({ length: count }, (_, i) => (lo as number) + i * (step as number)),
    };
  }
  const budgets = text.split(',').map((part) => positive(part, 'budget'));
  return { kind: 'list', budgets };
}

function positive(part: string, what: string): number {
  const value = decimalOrNaN(part);
  if (part.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `${what}: "${part}" is not a positive number of GPU-hours per hour (use LO:HI:STEP or b1,b2,...)`,
    );
  }
  return value;
}

/** Evenly spaced budgets from lo to hi inclusive. */
export function spaced(lo: number, hi: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => lo + ((hi - lo) * i) / (count - 1));
}
