import { readFileSync } from 'node:fs';
import { usageError } from './errors.ts';

/** A decimal number as JSON writes one (1.5, -2, 1e3), with a sign or a bare point (+1, .5, 5.) allowed. */
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/** A finite number; the API judges its range, so the CLI and the API never disagree on limits. */
/** Written as a decimal number (not 0x10, 0b11, 0o7, which Number() also reads). */
export const isDecimal = (value: string): boolean => DECIMAL.test(value.trim());

export function parseNumber(value: string, what: string): number {
  // Number() also reads 0x10, 0b11 and 0o7: a budget of "0x10" was set to 16.
  const n = isDecimal(value) ? Number(value) : Number.NaN;
  // 1e400 is a decimal number past what a double holds: "must be a number" misnamed it (a trial).
  if (Number.isNaN(n)) throw usageError(`${what} must be a number, got "${value}"`);
  if (!Number.isFinite(n)) throw usageError(`${what} is beyond what a number can hold, got "${value}"`);
  return n;
}

export function parseJobId(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw usageError(`a job id is a positive integer (see boa jobs list), got "${value}"`);
  }
  return Number(value);
}

/** A text file, a read failure named by path. */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code}`);
  }
}

/** A JSON file, with read and parse failures named by path. */
export function readJsonFile(path: string): unknown {
  const text = readTextFile(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${path} is not JSON: ${(error as Error).message}`);
  }
}
