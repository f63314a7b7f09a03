import type { CoreV1Api } from '@kubernetes/client-node';
import { LOG_START, LogCursorError } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { logRefused, statusOf } from './logs.ts';
import { compareStamps, parseLine, secondAsTime, type Stamp } from './log-stamps.ts';
import { type LineReader, readStampedLines, type StreamedReadDeps } from './log-read.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/**
 * Where a followed pod log starts, in terms the API server can be asked again for: the log's beginning,
 * or a whole second (sinceTime has no finer grain) and how many of the lines stamped from it come before.
 */
export interface PodLogAnchor {
  /** Seconds since the epoch; undefined: the log's beginning. */
  readonly second?: number;
  readonly linesBefore: number;
}

const ALLOWED = `a pod log's cursor is "${LOG_START}" or a second and the lines before, e.g. 2026-11-30T11:08:23Z/2`;

/** The anchor as a follower's cursor: `start`, or `2026-11-30T11:08:23Z/2`. */
export function formatCursor(anchor: PodLogAnchor): string {
  return anchor.second === undefined ? LOG_START : `${secondAsTime(anchor.second)}/${anchor.linesBefore}`;
}

export function parseCursor(cursor: string): PodLogAnchor {
  if (cursor === LOG_START) return { linesBefore: 0 };
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\/(\d{1,9})$/.exec(cursor);
  const ms = match ? Date.parse(match[1]!) : NaN;
  if (!match || Number.isNaN(ms)) throw new LogCursorError(cursor, ALLOWED);
  return { second: ms / 1000, linesBefore: Number(match[2]) };
}

export interface StampedReadDeps {
  readonly api: CoreV1Api;
  readonly namespace: string;
  readonly retry: RetryContext;
  readonly container: string;
}

export type StampedLine = { readonly stamp: Stamp | undefined; readonly text: string };

/**
 * The anchor of a log's last `tailLines` lines: the second of the first of them, and the lines of that
 * second before it, found by reading from that second and finding the tail in what comes (a second
 * may hold many lines: a coarse clock, a burst). That read is streamed, holding no more lines than the
 * tail: a second may hold most of a 10 MiB log. 'gone' when the pod is.
 */
export async function anchorOfTail(
  deps: StampedReadDeps & StreamedReadDeps,
  name: string,
  tailLines: number,
): Promise<PodLogAnchor | 'gone'> {
  const tail = await readStamped(deps, name, { tailLines });
  if (tail === 'gone') return tail;
  const first = tail[0]?.stamp;
  // Fewer lines than asked: the tail is the whole log. Unstamped lines: no second to start from.
  if (tail.length < tailLines || !first) return { linesBefore: 0 };
  const found = await readStampedLines(deps, name, { sinceTime: secondAsTime(first.seconds) }, () =>
    lastRunOf(tail, first),
  );
  if (found === 'gone') return found;
  // Not found (the kubelet rotated the log between the reads): those stamped earlier come before.
  return { second: first.seconds, linesBefore: found.at >= 0 ? found.at : found.earlier };
}

/** A non-followed read with timestamps, as lines; a container not started yet has written none. */
export async function readStamped(
  deps: StampedReadDeps,
  name: string,
  from: { tailLines?: number; sinceTime?: string },
): Promise<StampedLine[] | 'gone'> {
  const { api, namespace, container, retry } = deps;
  try {
    const text = await withKubeRetry(
      'read pod log',
      () => api.readNamespacedPodLog({ name, namespace, container, timestamps: true, ...from }),
      retry,
    );
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines.map(parseLine);
  } catch (error) {
    const status = statusOf(error);
    if (status === 400) return [];
    if (status === 403) throw logRefused(name, namespace, error);
    if (kindOf(error) === 'not-found') return 'gone';
    throw error;
  }
}

/**
 * The last index where `run` occurs whole (stamps and text) in the lines taken, or -1; and how many of
 * them are stamped before `first`. It holds the last run.length lines taken, no more.
 */
function lastRunOf(run: readonly StampedLine[], first: Stamp): LineReader<{ at: number; earlier: number }> {
  const same = (a: StampedLine, b: StampedLine) =>
    a.text === b.text && (a.stamp && b.stamp ? compareStamps(a.stamp, b.stamp) === 0 : a.stamp === b.stamp);
  const last: StampedLine[] = [];
  let taken = 0;
  let at = -1;
  let earlier = 0;
  return {
    take(line) {
      last[taken % run.length] = line;
      taken += 1;
      if (line.stamp && compareStamps(line.stamp, first) < 0) earlier += 1;
      const start = taken - run.length;
      if (start >= 0 && run.every((r, i) => same(last[(start + i) % run.length]!, r))) at = start;
      return false;
    },
    result: () => ({ at, earlier }),
  };
}
