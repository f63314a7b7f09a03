/** Argument parsing shared by the simulator commands (simulate, compare, gen-trace, bench:sim). */
import { isDecimal } from '../../src/cli/parse.ts';
import { isSeed, SEED_LIMIT } from '../../src/core/seed.ts';
import { isPolicyOptionsError } from '../../src/sim/policy.ts';
import { UsageError } from './inputs.ts';

/**
 * The number a flag writes in decimal, or NaN: Number() also reads 0x10, 0b11 and 0o7, and
 * `compare --budgets 0x10` ran at a budget of 16 (the boa CLI and the trace loader refuse them already).
 */
export function decimalOrNaN(text: string): number {
  return isDecimal(text) ? Number(text) : Number.NaN;
}

/** `app:percent,...` into weights, e.g. `cifar10:50.42,bert:21.67`. */
export function parseMix(text: string): Record<string, number> {
  const mix: Record<string, number> = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9_.-]+):([^:]+)$/.exec(part);
    const weight = decimalOrNaN(match?.[2] ?? '');
    if (!match || !(Number.isFinite(weight) && weight > 0)) {
      throw new UsageError(`--mix: "${part}" is not app:percent with a positive percent (e.g. cifar10:50.4)`);
    }
    if ((match[1] as string) in mix) throw new UsageError(`--mix: ${match[1]} is given twice`);
    mix[match[1] as string] = weight;
  }
  if (Object.keys(mix).length === 0) throw new UsageError('--mix is empty; give app:percent pairs');
  return mix;
}

/** A `--seed` flag: an integer from 0 to 2^32 - 1 (src/core/seed.ts). */
export function seedOption(text: string): number {
  const seed = decimalOrNaN(text);
  if (text.trim() !== '' && isSeed(seed)) return seed;
  throw new UsageError(`--seed must be an integer from 0 to ${SEED_LIMIT - 1}, got "${text}"`);
}

/** A number option: finite, and within the stated bounds. */
export function numberOption(
  text: string,
  flag: string,
  {
    min = Number.NEGATIVE_INFINITY,
    integer = false,
    exclusiveMin = false,
    below = Number.POSITIVE_INFINITY,
  } = {},
): number {
  const value = decimalOrNaN(text);
  const ok =
    text.trim() !== '' &&
    Number.isFinite(value) &&
    (exclusiveMin ? value > min : value >= min) &&
    value < below &&
    // Safe integers only: 1e20 is an integer to Number.isInteger, but a seed that large ended in the
    // generator's RangeError, a stack trace.
    (!integer || Number.isSafeInteger(value));
  if (ok) return value;
  const kind = integer ? 'an integer' : 'a number';
  const bounds = [
    ...(Number.isFinite(min) ? [`${exclusiveMin ? '>' : '>='} ${min}`] : []),
    ...(Number.isFinite(below) ? [`< ${below}`] : []),
  ];
  if (integer && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    const max = Number.MAX_SAFE_INTEGER;
    const range = bounds.length > 0 ? `${bounds.join(' and ')} and <= ${max}` : `from ${-max} to ${max}`;
    throw new UsageError(`${flag} must be an integer ${range}, got "${text}"`);
  }
  const bound = bounds.length > 0 ? ` ${bounds.join(' and ')}` : '';
  throw new UsageError(`${flag} must be ${kind}${bound}, got "${text}"`);
}

/** Runs `fn`, turning the simulator's own input errors into usage errors (one line, exit code 2). */
export function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    const inputErrors = [
      'TraceSpecError',
      'UnknownPolicyError',
      'UnknownAppError',
      'EngineConfigError',
      'SimulationError',
      'JobClassError',
      'ClusterSpecError',
      'PolicyVariantError',
    ];
    if (error instanceof Error && (inputErrors.includes(error.name) || isPolicyOptionsError(error.name)))
      throw new UsageError(error.message);
    throw error;
  }
}
