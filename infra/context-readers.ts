/**
 * Reading one CDK context key as a string, number, whole number, boolean or list, each refusing a value
 * of another kind with a ContextError naming the key (infra/context.ts validates what they read).
 */

export class ContextError extends Error {
  override name = 'ContextError';
}

/** Reads one context key; CDK hands `-c` values over as strings and cdk.json values as JSON. */
export type ContextReader = (key: string) => unknown;

export function text(read: ContextReader, key: string): string | undefined {
  const raw = read(key);
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string')
    throw new ContextError(`context "${key}" must be a string, got ${JSON.stringify(raw)}`);
  return raw.trim();
}

export function num(read: ContextReader, key: string): number | undefined {
  const raw = read(key);
  if (raw === undefined || raw === null || raw === '') return undefined;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  if (!Number.isFinite(value))
    throw new ContextError(`context "${key}" must be a number, got ${JSON.stringify(raw)}`);
  return value;
}

export function int(read: ContextReader, key: string, min: number, max: number): number | undefined {
  const value = num(read, key);
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ContextError(`context "${key}" must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}

export function bool(read: ContextReader, key: string): boolean | undefined {
  const raw = read(key);
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new ContextError(`context "${key}" must be true or false, got ${JSON.stringify(raw)}`);
}

/** A list from a JSON array (cdk.json) or a comma-separated string (`-c key=a,b`). */
export function list(read: ContextReader, key: string): string[] {
  const raw = read(key);
  if (raw === undefined || raw === null || raw === '') return [];
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (!items || items.some((item) => typeof item !== 'string')) {
    throw new ContextError(`context "${key}" must be a list of strings or a comma-separated string`);
  }
  return (items as string[]).map((item) => item.trim()).filter((item) => item !== '');
}
