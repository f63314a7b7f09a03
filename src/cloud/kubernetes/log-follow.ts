import { PassThrough, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CoreV1Api, type KubeConfig, Log, type V1Pod } from '@kubernetes/client-node';
import type { LogPosition, ReplicaLogFollow, ReplicaLogQuery } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { anchorOfTail, formatCursor, parseCursor, type PodLogAnchor } from './log-cursor.ts';
import { type LogPlace, LogPlacer } from './log-place.ts';
import { linesOf, readStampedLines } from './log-read.ts';
import { compareStamps, parseLine, secondAsTime, type Stamp } from './log-stamps.ts';
import { logGenerations, logRefused, statusOf } from './logs.ts';
import { podName } from './names.ts';
import { admissionRejected, CONTAINER } from './pods.ts';
import { classifyKubeError, kindOf, withKubeRetry } from './retry.ts';

/** A stream that broke off, or a container not started yet, is asked again after this. */
const AGAIN_MS = 1000;
/** How long a pod its node turned away is waited for to be made again (readmit.ts: every 10 s, 3 times). */
const READMIT_WAIT_MS = 2 * 60_000;

export interface PodLogFollowDeps {
  readonly kubeConfig: KubeConfig;
  readonly api: CoreV1Api;
  readonly namespace: string;
  readonly retry: RetryContext;
  /** How long to wait before asking again (tests shorten it). */
  readonly againMs?: number;
}

/**
 * `kubectl logs -f` of one pod that does not lose or repeat lines when its stream breaks: the API server
 * (or a proxy's idle timeout in front of it) ends a followed log now and then, and the kubelet closes
 * one idle for hours. Lines come with their kubelet timestamps; a stream that ends while the container
 * still runs is opened again from the last one's second (sinceTime), dropping what was already given.
 * It starts at its last `tailLines` lines, or at a position a follower was given before (cut off by a
 * restart of boa, say): a cursor (a second, and the lines of it before) and bytes past it.
 * Its chunks end when the container has ended (all it wrote given) or the pod is gone, or `signal`
 * aborts. The first requests are made before this returns, so a refusal (403: boa's role lacks pods/log)
 * is an error to answer with, not a stream cut at once; undefined when the pod is gone.
 */
async function followPodLog(
  deps: PodLogFollowDeps,
  name: string,
  start: PodLogStart,
  signal: AbortSignal,
): Promise<{ chunks: AsyncGenerator<string>; from: LogPosition; gap?: true } | undefined> {
  const placed = await placeStart(deps, name, start);
  if (placed === 'gone') return undefined;
  const { anchor, skip } = placed;
  const from = anchorTime(anchor);
  const first = await open(deps, name, from, signal);
  if (first === 'gone') return undefined;
  const before = { lines: anchor.linesBefore, bytes: skip };
  const chunks = follow(deps, name, { from, before, stamped: false }, signal, first);
  return { chunks, from: { cursor: formatCursor(anchor), skip }, ...(placed.gap ? { gap: true } : {}) };
}

/**
 * Where a follow starts, as an anchor and bytes past it: the last `tailLines` lines, or where a follower
 * got to, found in the log as it is now (near the follower's last line, so the log is not read again
 * from where a long follow began). A position the log no longer reaches (the kubelet rotated it away)
 * is a gap: the follow goes on from the log's newest line. The log is read from the anchor's second (or
 * its start) a line at a time, up to the follower's line: a follow from `start` of a 10 MiB log reads
 * its first line to be placed, one far into it streams past the lines before, holding none of them.
 */
async function placeStart(
  deps: PodLogFollowDeps,
  name: string,
  start: PodLogStart,
): Promise<(LogPlace & { gap: boolean }) | 'gone'> {
  const stamped = { ...deps, container: CONTAINER };
  if (!('anchor' in start)) {
    const anchor = await anchorOfTail(stamped, name, start.tailLines);
    return anchor === 'gone' ? anchor : { anchor, skip: 0, gap: false };
  }
  const placer = await readStampedLines(stamped, name, anchorTime(start.anchor), () => {
    const placer = new LogPlacer(start, true);
    return { take: (line) => placer.take(line), result: () => placer };
  });
  if (placer === 'gone') return placer;
  const place = placer.end();
  if (place !== 'lost') return { anchor: place.anchor, skip: place.skip, gap: false };
  return { anchor: placer.endAnchor(), skip: 0, gap: true };
}

/**
 * A pod's last `tailLines` lines and what it writes until its container ends, each line with its
 * kubelet stamp (a log being kept: log-archive.ts). One request to start, none to place a cursor.
 */
export async function followPodTail(
  deps: PodLogFollowDeps,
  name: string,
  tailLines: number,
  signal: AbortSignal,
): Promise<AsyncGenerator<string> | undefined> {
  const first = await open(deps, name, { tailLines }, signal);
  if (first === 'gone') return undefined;
  return follow(
    deps,
    name,
    { from: { tailLines }, before: { lines: 0, bytes: 0 }, stamped: true },
    signal,
    first,
  );
}

/** Where a follow starts: a log's last lines, or where a follower got to. */
export type PodLogStart = { tailLines: number } | { anchor: PodLogAnchor; skip: number };

/** A follow's start from a query: a cursor this executor did not give is the asker's mistake. */
export function startOf(query: ReplicaLogQuery): PodLogStart {
  return query.from
    ? { anchor: parseCursor(query.from.cursor), skip: query.from.skip }
    : { tailLines: query.tailLines };
}

/** A replica's pod log followed: of the generation asked for, else of the newest whose pod exists. */
export async function followReplicaLog(
  deps: PodLogFollowDeps,
  pods: readonly V1Pod[],
  query: ReplicaLogQuery,
  signal: AbortSignal,
): Promise<ReplicaLogFollow | undefined> {
  // Parsed first: a cursor this executor did not give is the asker's mistake, whatever the pods.
  const start = startOf(query);
  for (const generation of logGenerations(pods, query)) {
    const name = podName(query.jobId, generation, query.rank);
    const followed = await followPodLog(deps, name, start, signal);
    if (followed) return { generation, ...followed };
  }
  return undefined;
}

/** Where a request for the log starts: the whole log, from a second, or its last lines. */
type LogRequest = { sinceTime?: string; tailLines?: number };

/** What to ask the API server for to read from an anchor: the whole log, or from its second. */
function anchorTime(anchor: PodLogAnchor): LogRequest {
  return anchor.second === undefined ? {} : { sinceTime: secondAsTime(anchor.second) };
}

type Opened =
  { lines: AsyncIterable<string>; close: () => void; unfinished: { text: string } } | 'not-started' | 'gone';

/**
 * One request for the log. Its connection is closed when `signal` aborts, whatever has come of it by
 * then: a follower gone before the stream was read must not leave it open until the container ends.
 */
async function open(
  deps: PodLogFollowDeps,
  name: string,
  from: LogRequest,
  signal: AbortSignal,
): Promise<Opened> {
  const stream = new PassThrough();
  // client-node pipes the response body into it, and a body that breaks off neither ends nor errors
  // the pipe's destination: that is taken from the body itself.
  let body: Readable | undefined;
  stream.on('pipe', (source: Readable) => {
    body = source;
    source.once('error', () => stream.end());
  });
  // A last write of the body racing its close: nothing is read after the close anyway.
  stream.on('error', () => undefined);
  let abort: AbortController | undefined;
  const close = () => {
    body?.unpipe(stream);
    abort?.abort();
    stream.end();
  };
  signal.addEventListener('abort', close, { once: true });
  stream.once('close', () => signal.removeEventListener('abort', close));
  try {
    const options = { follow: true, timestamps: true, ...from };
    abort = await new Log(deps.kubeConfig).log(deps.namespace, name, CONTAINER, stream, options);
    if (signal.aborted) close();
    const unfinished = { text: '' };
    return { lines: linesOf(stream, unfinished), close, unfinished };
  } catch (error) {
    stream.destroy();
    // 400: its container has not started; asked again until it has, or its pod is gone.
    if (statusOf(error) === 400) return 'not-started';
    if (statusOf(error) === 404) return 'gone';
    if (statusOf(error) === 403) throw logRefused(name, deps.namespace, error);
    throw error;
  }
}

async function* follow(
  deps: PodLogFollowDeps,
  name: string,
  { from, before, stamped }: { from: LogRequest; before: { lines: number; bytes: number }; stamped: boolean },
  signal: AbortSignal,
  first: Opened,
): AsyncGenerator<string> {
  /** The newest stamp read, and how many lines carried it: a stream opened again skips those. */
  let last: Stamp | undefined;
  let givenAtLast = 0;
  /** What comes before the text: the anchor's second's earlier lines, then the bytes a follower had. */
  let linesBefore = before.lines;
  let bytesBefore = before.bytes;
  let opened = first;
  let readmitUntil = 0;
  /** Whether this stream is one opened again, and how many lines of the last second it gives again. */
  let reopened = false;
  let skipAtLast = 0;
  /** A line read: the text to give, or undefined when it was given before or comes before the start. */
  const admit = (line: string): string | undefined => {
    const { stamp, text } = parseLine(line);
    if (stamp && last) {
      const order = compareStamps(stamp, last);
      // Given before the stream broke: sinceTime is whole seconds, so its second comes again.
      if (reopened && order < 0) return undefined;
      if (order === 0 && skipAtLast > 0) {
        skipAtLast -= 1;
        return undefined;
      }
      givenAtLast = order === 0 ? givenAtLast + 1 : 1;
    } else if (stamp) givenAtLast = 1;
    if (stamp) last = stamp;
    if (linesBefore > 0) {
      linesBefore -= 1;
      return undefined;
    }
    // Kept with its stamp (an archive), where a later reader finds a cursor's second.
    const bytes = Buffer.from(`${stamped ? line : text}\n`);
    if (bytesBefore >= bytes.length) {
      bytesBefore -= bytes.length;
      return undefined;
    }
    const given = bytes.subarray(bytesBefore).toString();
    bytesBefore = 0;
    return given;
  };
  // sinceTime is whole seconds: the last line's second comes again, its lines already read dropped.
  // A throttled or unavailable API server is asked again, as long as the follower waits; anything else
  // ends the stream as cut.
  const openAgain = () =>
    open(deps, name, last ? { sinceTime: secondAsTime(last.seconds) } : from, signal).catch(
      (error: unknown) => {
        const kind = classifyKubeError(error);
        if (kind === 'throttling' || kind === 'transient') return 'not-started' as const;
        throw error;
      },
    );
  const again = () => sleep(deps.againMs ?? AGAIN_MS, undefined, { signal }).catch(() => undefined);
  try {
    for (let toItsEnd = false; ; reopened = true) {
      if (signal.aborted) return;
      // Gone while the executor makes a turned-away pod again: waited for, a while.
      if (opened === 'gone') {
        if (Date.now() > readmitUntil) return;
        opened = 'not-started';
      }
      if (opened !== 'not-started') {
        const { lines, close, unfinished } = opened;
        skipAtLast = reopened ? givenAtLast : 0;
        try {
          for await (const line of lines) {
            const given = admit(line);
            if (given !== undefined) yield given;
          }
        } finally {
          close();
        }
        if (signal.aborted) return;
        const state = await podState(deps, name);
        if (state === 'ended') {
          // The stream may have broken off just before the container ended: read once more to its end.
          if (!toItsEnd) {
            toItsEnd = true;
            const rest = await openAgain();
            if (typeof rest !== 'string') {
              opened = rest;
              continue;
            }
          }
          // A line the container ended without a \n is its last words; one a stream was cut in is not
          // given (it comes again whole).
          const lastWords = unfinished.text ? admit(unfinished.text) : undefined;
          if (lastWords !== undefined) yield lastWords;
          return;
        }
        if (state === 'turned-away') readmitUntil = Date.now() + READMIT_WAIT_MS;
      }
      await again();
      if (signal.aborted) return;
      opened = await openAgain();
    }
  } finally {
    if (typeof opened !== 'string') opened.close();
  }
}

/**
 * Whether the pod's container has ended (or the pod is gone: its log will not grow), or its node turned
 * it away before it ran, when the executor makes it again under the same name (readmit.ts).
 */
async function podState(deps: PodLogFollowDeps, name: string): Promise<'running' | 'ended' | 'turned-away'> {
  try {
    const pod = await withKubeRetry(
      'read pod',
      () => deps.api.readNamespacedPod({ name, namespace: deps.namespace }),
      deps.retry,
    );
    if (admissionRejected(pod)) return 'turned-away';
    const phase = pod.status?.phase;
    return phase === 'Succeeded' || phase === 'Failed' ? 'ended' : 'running';
  } catch (error) {
    if (kindOf(error) === 'not-found') return 'ended';
    throw error;
  }
}
