import { escapeLogBytes, KEEPALIVE_BYTES } from '../core/log-keepalive.ts';

/**
 * A response body from text (or byte) chunks as they come. `stop` aborts when it is over, however it ends: the
 * reader going away (the client disconnected, the server closing) ends whatever produces the chunks.
 * A producer's failure fails the body, so the client sees a cut stream, not one that ended as if the
 * replica had. With `keepaliveMs`, the body is a followed log's with keepalives (core/log-keepalive.ts):
 * the chunks' NULs escaped, and a keepalive after each `keepaliveMs` without a chunk.
 */
export function textStream(
  chunks: AsyncIterable<string | Uint8Array>,
  stop: AbortController,
  keepaliveMs?: number,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  // The chunk asked for and not come yet: a keepalive is sent while it is awaited, not instead of it.
  let coming: Promise<IteratorResult<string | Uint8Array>> | undefined;
  let keepaliveTimer: ReturnType<typeof setTimeout> | undefined;
  const nextOrKeepalive = (): Promise<IteratorResult<string | Uint8Array> | 'keepalive'> => {
    coming ??= iterator.next();
    if (keepaliveMs === undefined) return coming;
    const silence = new Promise<'keepalive'>((due) => {
      keepaliveTimer = setTimeout(() => due('keepalive'), keepaliveMs);
    });
    return Promise.race([coming, silence]).finally(() => clearTimeout(keepaliveTimer));
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await nextOrKeepalive();
        if (next === 'keepalive') return controller.enqueue(KEEPALIVE_BYTES);
        coming = undefined;
        if (next.done) {
          stop.abort(); // done with: what counts the followers counts this one out
          controller.close();
        } else {
          // Bytes go as they are (a local log's, which a follower counts as the file's bytes).
          const bytes = typeof next.value === 'string' ? encoder.encode(next.value) : next.value;
          controller.enqueue(keepaliveMs === undefined ? bytes : escapeLogBytes(bytes));
        }
      } catch (error) {
        stop.abort();
        controller.error(error);
      }
    },
    async cancel() {
      clearTimeout(keepaliveTimer);
      stop.abort();
      await iterator.return?.();
    },
  });
}
