import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison: both sides are hashed first, so lengths never leak either. */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Constant-time check of a token against a stored hash. */
export function tokenMatchesHash(given: string, storedHash: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The token of a job boa runs, derived from a stored random seed and the service's job-token key
 * (DATA_DIR/job-token.key): the executor can give every new replica the token again, while the store
 * keeps only the seed and the hash, so a copy of the database alone does not hold any job's token.
 */
export function deriveJobToken(key: Buffer, seed: string): string {
  return createHmac('sha256', key).update(`boa-job-token:${seed}`).digest('base64url');
}
