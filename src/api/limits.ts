import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { BOUNDS } from './bounds.ts';
import { errorBody } from './errors.ts';

/** Every request body is capped at this size unless its route is listed below. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/**
 * One history arrival at its longest: a class name of the most characters, an ISO time of the most,
 * written with a space after each colon and comma as Python's json.dumps does (JSON.stringify writes
 * fewer bytes). JSON allows any whitespace, so no limit takes every valid body: this one takes the
 * longest one a serializer writes.
 */
const LONGEST_ARRIVAL =
  `{"className": "${'c'.repeat(BOUNDS.className)}", ` + `"submittedAt": "${'0'.repeat(BOUNDS.isoTime)}"}, `;

/** The most arrivals one import takes, each at its longest, and 4 KiB for source and observedFrom. */
export const HISTORY_BODY_LIMIT = BOUNDS.historyArrivals * LONGEST_ARRIVAL.length + 4 * 1024;

/**
 * Routes that need more: a class profile is one JSON object of up to MAX_EPOCHS statistical epochs,
 * each with a speedup table of up to MAX_WIDTH entries; 1 MiB holds the largest valid one. A history
 * import: HISTORY_BODY_LIMIT (about 1.3 MiB).
 */
export const BODY_LIMITS: ReadonlyArray<{ method: string; path: RegExp; bytes: number }> = [
  { method: 'PUT', path: /^\/v1\/classes\/[^/]+$/, bytes: 1024 * 1024 },
  { method: 'POST', path: /^\/v1\/classes\/validate$/, bytes: 1024 * 1024 },
  { method: 'POST', path: /^\/v1\/history$/, bytes: HISTORY_BODY_LIMIT },
];

export function bodyLimitFor(method: string, path: string): number {
  return BODY_LIMITS.find((l) => l.method === method && l.path.test(path))?.bytes ?? DEFAULT_BODY_LIMIT;
}

/**
 * Caps request bodies before anything reads them: a Content-Length over the limit is refused at once
 * (413), and a chunked body is counted as it streams and refused as soon as it passes the limit, so
 * memory stays bounded by the limit whatever the client sends.
 */
export function bodyLimits(): MiddlewareHandler {
  const limiters = new Map<number, MiddlewareHandler>();
  const limiter = (bytes: number) => {
    let handler = limiters.get(bytes);
    if (!handler) {
      handler = bodyLimit({
        maxSize: bytes,
        onError: (c) =>
          c.json(
            errorBody(
              'payload_too_large',
              `request body over ${bytes} bytes (the limit for this route)`,
              undefined,
              {
                limitBytes: bytes,
              },
            ),
            413,
          ),
      });
      limiters.set(bytes, handler);
    }
    return handler;
  };
  return (c, next) => limiter(bodyLimitFor(c.req.method, c.req.path))(c, next);
}
