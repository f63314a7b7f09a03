import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeApiCore } from './core.ts';
import { KubeError, type KubeObject } from './objects.ts';

/** One line a container wrote, stamped as the kubelet stamps it (RFC3339 with nanoseconds). */
interface LogLine {
  readonly stamp: string;
  readonly at: number;
  readonly text: string;
}

/**
 * Pods' container output, as the kubelet keeps it: lines with their time, read by GET .../log with
 * tailLines, timestamps, sinceTime and follow (the stream stays open and gets each new line until the
 * container ends or the pod goes, as the real server's does).
 */
export class PodLogs {
  private readonly lines = new Map<string, LogLine[]>();
  private readonly listeners = new Map<string, Set<() => void>>();
  /** Within a millisecond, lines get increasing nanoseconds: stamps are distinct and ordered. */
  private sequence = 0;

  constructor(private readonly now: () => number) {}

  /** Stamps in this offset from UTC (a node whose clock is not in UTC), in minutes. */
  utcOffsetMinutes = 0;
  /** Stamps to the second only (a coarse clock): many lines share one. */
  coarse = false;
  /** The next line a followed stream sends is cut off just past its stamp, with the connection. */
  cutInNextLine = false;

  write(key: string, text: string): void {
    const list = this.lines.get(key) ?? [];
    for (const piece of text.split(/(?<=\n)/).filter((p) => p !== '')) {
      const at = this.now();
      this.sequence = (this.sequence + 1) % 1_000_000;
      list.push({ stamp: this.stamp(at), at, text: piece });
    }
    this.lines.set(key, list);
    for (const listener of this.listeners.get(key) ?? []) listener();
  }

  private stamp(at: number): string {
    const offset = this.utcOffsetMinutes;
    const local = new Date((this.coarse ? Math.floor(at / 1000) * 1000 : at) + offset * 60_000).toISOString();
    const sign = offset < 0 ? '-' : '+';
    const zone =
      offset === 0
        ? 'Z'
        : `${sign}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
    const fraction = this.coarse ? '' : `.${local.slice(20, 23)}${String(this.sequence).padStart(6, '0')}`;
    return `${local.slice(0, 19)}${fraction}${zone}`;
  }

  /**
   * The kubelet rotates the log: what it wrote so far leaves the file the API server reads (its newest).
   * For logs no one follows now (an open follow would miss the next lines).
   */
  rotate(key: string): void {
    this.lines.set(key, []);
  }

  text(key: string): string {
    return (this.lines.get(key) ?? []).map((l) => l.text).join('');
  }

  /** The lines from `from` on (an index), formatted as the query asks. */
  read(key: string, from: number, timestamps: boolean): { text: string; next: number } {
    const list = this.lines.get(key) ?? [];
    const text = list
      .slice(from)
      .map((l) => (timestamps ? `${l.stamp} ${l.text}` : l.text))
      .join('');
    return { text, next: list.length };
  }

  /** The index of the first line to send: at or after sinceTime (seconds), then the last tailLines. */
  start(key: string, query: URLSearchParams): number {
    const list = this.lines.get(key) ?? [];
    const since = query.get('sinceTime');
    let first = since === null ? 0 : list.findIndex((l) => l.at >= Date.parse(since));
    if (first < 0) first = list.length;
    const tail = query.get('tailLines');
    if (tail !== null) first = Math.max(first, list.length - Number(tail));
    return first;
  }

  listen(key: string, listener: () => void): () => void {
    const set = this.listeners.get(key) ?? new Set();
    set.add(listener);
    this.listeners.set(key, set);
    return () => set.delete(listener);
  }
}

/**
 * GET .../pods/{name}/log: text/plain (gone with the pod; 400 while its container has not started).
 * Returns the response when it is a follow that stays open (the server cuts those at close).
 */
export function serveLog(
  core: KubeApiCore,
  res: ServerResponse,
  req: IncomingMessage,
  namespace: string,
  name: string,
  query: URLSearchParams,
): ServerResponse | undefined {
  const pod = core.get('pods', namespace, name) as KubeObject; // 404 once the pod is gone
  if (pod.status?.phase === 'Pending')
    throw new KubeError(
      400,
      'BadRequest',
      `container "replica" in pod "${name}" is waiting to start: ContainerCreating`,
    );
  const key = `${namespace}/${name}`;
  const timestamps = query.get('timestamps') === 'true';
  const first = core.logs.read(key, core.logs.start(key, query), timestamps);
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  const ended = () => {
    const now = [...core.store.peek('pods')].find(
      (p) => p.metadata.namespace === namespace && p.metadata.name === name,
    );
    return !now || now.status?.phase === 'Succeeded' || now.status?.phase === 'Failed';
  };
  if (query.get('follow') !== 'true' || ended()) {
    res.end(first.text);
    return undefined;
  }
  res.write(first.text);
  let next = first.next;
  const send = () => {
    const more = core.logs.read(key, next, timestamps);
    next = more.next;
    if (more.text && core.logs.cutInNextLine) {
      core.logs.cutInNextLine = false;
      unlisten();
      clearInterval(timer);
      // Cut once the piece is on its way: destroyed at once, it would not be sent.
      res.write(more.text.slice(0, more.text.indexOf(' ') + 4), () => setTimeout(() => res.destroy(), 20));
      return;
    }
    if (more.text) res.write(more.text);
    if (ended()) stop();
  };
  const unlisten = core.logs.listen(key, send);
  // A container's end or its pod's deletion is a status change, not a line: checked as time passes.
  const timer = setInterval(send, 20);
  const stop = () => {
    unlisten();
    clearInterval(timer);
    if (!res.writableEnded) res.end();
  };
  req.on('close', stop);
  return res;
}
