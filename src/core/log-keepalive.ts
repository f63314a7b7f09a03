/**
 * A followed log's keepalive (docs/api.md). A follower that asks for it with the request header
 * `boa-log-keepalive` gets, after each interval without a line, the two bytes NUL `k`, and each NUL of
 * the log as NUL NUL: a reader tells a quiet job from a connection dropped without a word (a NAT or
 * proxy forgetting it), and skips them, counting only the log's bytes. A follower that does not ask
 * (curl) gets the log's bytes alone, as an HTTP/1.1 body can carry nothing that is not its text.
 */

/** The request header that asks for keepalives; the answer's, their interval in seconds. */
export const LOG_KEEPALIVE_HEADER = 'boa-log-keepalive';

const NUL = 0x00;
const KEEPALIVE_MARK = 0x6b; // 'k'

/** What is sent after an interval without a line. */
export const KEEPALIVE_BYTES = Uint8Array.of(NUL, KEEPALIVE_MARK);

/** How many keepalive intervals without a byte a reader waits before it takes the connection as dead. */
export const KEEPALIVES_MISSED = 3;

/** The log's bytes with each NUL doubled, so a NUL `k` in them cannot read as a keepalive. */
export function escapeLogBytes(bytes: Uint8Array): Uint8Array {
  if (!bytes.includes(NUL)) return bytes;
  const escaped: number[] = [];
  for (const byte of bytes) {
    escaped.push(byte);
    if (byte === NUL) escaped.push(NUL);
  }
  return Uint8Array.from(escaped);
}

/**
 * Takes the log's bytes back out of an answer with keepalives, piece by piece as they come (a NUL and
 * what it escapes may come in two pieces).
 */
export class KeepaliveReader {
  private escaping = false;

  /** The log's bytes in `piece`, keepalives dropped. */
  logBytes(piece: Uint8Array): Uint8Array {
    if (!this.escaping && !piece.includes(NUL)) return piece;
    const out: number[] = [];
    for (const byte of piece) {
      if (this.escaping) {
        this.escaping = false;
        if (byte === NUL) out.push(NUL);
        // Anything else after a NUL is a keepalive (`k`; another mark a later boa may send is skipped too).
      } else if (byte === NUL) this.escaping = true;
      else out.push(byte);
    }
    return Uint8Array.from(out);
  }
}
