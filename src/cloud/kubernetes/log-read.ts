import { PassThrough, type Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { type KubeConfig, Log } from '@kubernetes/client-node';
import type { RetryContext } from '../retry.ts';
import type { StampedLine } from './log-cursor.ts';
import { parseLine } from './log-stamps.ts';
import { logRefused, statusOf } from './logs.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/** A line longer than this (a progress bar redrawn with \r for hours) is given in pieces, not held whole. */
const MAX_LINE_CHARS = 1 << 20;

/**
 * Lines as the container wrote them, split at \n only (a progress bar's \r stays within its line). What
 * follows the last \n when the stream ends is left in `unfinished`: a line the stream was cut in, which
 * comes again whole, or the last words of a container that ended without a \n.
 */
export async function* linesOf(stream: PassThrough, unfinished: { text: string }): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of stream) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      pending += text;
      if (pending.length > MAX_LINE_CHARS) {
        yield pending;
        pending = '';
      }
      continue;
    }
    const lines = (pending + text.slice(0, end)).split('\n');
    pending = text.slice(end + 1);
    yield* lines;
  }
  unfinished.text = pending + decoder.decode();
}

/** What a streamed read gives its lines to: true from `take` when it needs no more; then its `result`. */
export interface LineReader<T> {
  take(line: StampedLine): boolean;
  result(): T;
}

export interface StreamedReadDeps {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly retry: RetryContext;
  readonly container: string;
}

/**
 * A non-followed read with timestamps, each line given to `take` as the API server sends it until `take`
 * says it has what it needs: the request is closed then, not read to the log's end. At most a chunk of
 * the response and a line (a longer one in pieces) are held, however long the log (the kubelet's file:
 * up to 10 MiB). A container not started yet has written nothing; 'gone' when the pod is; a refusal
 * names the permission. A response that breaks off is read again from the start, with `take` made anew
 * (`start` makes it), as the retry layer retries a transient error: what it gives is of a whole read.
 */
export async function readStampedLines<T>(
  deps: StreamedReadDeps,
  name: string,
  from: { tailLines?: number; sinceTime?: string },
  start: () => LineReader<T>,
): Promise<T | 'gone'> {
  try {
    return await withKubeRetry('read pod log', () => readOnce(deps, name, from, start()), deps.retry);
  } catch (error) {
    const status = statusOf(error);
    if (status === 400) return start().result();
    if (status === 403) throw logRefused(name, deps.namespace, error);
    if (kindOf(error) === 'not-found') return 'gone';
    throw error;
  }
}

async function readOnce<T>(
  deps: StreamedReadDeps,
  name: string,
  from: { tailLines?: number; sinceTime?: string },
  reader: LineReader<T>,
): Promise<T> {
  const stream = new PassThrough();
  // client-node pipes the response body into it, and a body that breaks off neither ends nor errors
  // the pipe's destination: that is taken from the body itself.
  let broke: { cause: unknown } | undefined;
  stream.on('pipe', (source: Readable) => {
    source.once('error', (cause: unknown) => {
      broke ??= { cause };
      stream.end();
    });
  });
  stream.on('error', () => undefined);
  const options = { follow: false, timestamps: true, ...from };
  let abort: AbortController;
  try {
    abort = await new Log(deps.kubeConfig).log(deps.namespace, name, deps.container, stream, options);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  try {
    const unfinished = { text: '' };
    for await (const line of linesOf(stream, unfinished)) {
      if (reader.take(parseLine(line))) return reader.result();
    }
    if (broke) {
      // Retried as a connection reset is: the read starts again.
      throw Object.assign(new Error(`pod ${name}'s log broke off as it was read`, { cause: broke.cause }), {
        code: 'ECONNRESET',
      });
    }
    // Its last line, written without a \n (the container's last words, or one it is writing now).
    if (unfinished.text) reader.take(parseLine(unfinished.text));
    return reader.result();
  } finally {
    abort.abort();
    stream.destroy();
  }
}
