/**
 * A response body from text (or byte) chunks as they come. `stop` aborts when it is over, however it ends: the
 * reader going away (the client disconnected, the server closing) ends whatever produces the chunks.
 * A producer's failure fails the body, so the client sees a cut stream, not one that ended as if the
 * replica had.
 */
export function textStream(
  chunks: AsyncIterable<string | Uint8Array>,
  stop: AbortController,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          stop.abort(); // done with: what counts the followers counts this one out
          controller.close();
        } else
          // Bytes go as they are (a local log's, which a follower counts as the file's bytes).
          controller.enqueue(typeof next.value === 'string' ? encoder.encode(next.value) : next.value);
      } catch (error) {
        stop.abort();
        controller.error(error);
      }
    },
    async cancel() {
      stop.abort();
      await iterator.return?.();
    },
  });
}
