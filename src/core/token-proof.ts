import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * How a local service proves it holds the operator token before the CLI sends it the one it read from
 * the data dir's `token` file (docs/security.md, "The CLI and the token file"). The CLI asks
 * `GET /token-proof?nonce=N` with a fresh random N and no token; boa answers with an HMAC of N keyed
 * with its operator token, bound to the connection's address and port as boa's end of it sees them;
 * the CLI computes the same from the file's token and its own end of the connection, and sends the
 * token only when they agree. Something else listening on that port (boa down, another user's
 * process) cannot answer without the token, and one relaying the question to a boa on another port or
 * address gets an answer bound to that other one.
 */
export const TOKEN_PROOF_PATH = '/token-proof';

/** A nonce the CLI makes: 32 random bytes, base64url (43 characters); the service takes 32 to 128. */
export const TOKEN_PROOF_NONCE = /^[A-Za-z0-9_-]{32,128}$/;

/**
 * One end of a TCP connection as both sides name it: an IPv4 address a dual-stack socket reports as
 * `::ffff:127.0.0.1` is `127.0.0.1`, as the other side sees it.
 */
export function connectionEnd(address: string | undefined, port: number | undefined): string {
  const plain = (address ?? '').replace(/^::ffff:(?=\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$)/i, '');
  return `${plain} ${port ?? ''}`;
}

export function tokenProof(token: string, nonce: string, end: string): string {
  return createHmac('sha256', token).update(`boa token proof 1\n${nonce}\n${end}`).digest('base64url');
}

/** Whether `given` is the proof expected, compared in constant time. */
export function proofMatches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
