/**
 * An Idempotency-Key as boa takes it, the same in the API and the CLI: printable ASCII, so it can be
 * echoed in messages and logs as it is, and no space at either end: HTTP drops those from a header's
 * value, so "k " would arrive as "k" and replay the job another key registered.
 */
export const IDEMPOTENCY_KEY_MAX = 255;

export const IDEMPOTENCY_KEY_RULE = `1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters (space to ~), no space at either end, e.g. a UUID`;

export function validIdempotencyKey(key: string): boolean {
  return (
    key.length >= 1 &&
    key.length <= IDEMPOTENCY_KEY_MAX &&
    /^[\x20-\x7e]*$/.test(key) &&
    !key.startsWith(' ') &&
    !key.endsWith(' ')
  );
}
