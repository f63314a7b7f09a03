/**
 * A response body from text chunks as they come. `stop` aborts when it is over, however it ends: the
 * reader going away (the client disconnected, the server closing) ends whatever produces the chunks.
 * A producer's failure fails the body, so the client sees a cut stream, not one that ended as if the
 * replica had.
 */
export function textStream(chunks: AsyncIterable<string>, stop: AbortController): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          stop.abort(); // done with: what counts the followers counts this one out
          controller.close();
        } else controller.enqueue(encoder.encode(next.value));
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
