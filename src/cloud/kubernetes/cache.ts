import type { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import { withKubeRetry } from './retry.ts';

interface Meta {
  name?: string;
  resourceVersion?: string;
  deletionTimestamp?: Date | string;
}
interface Listed<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

export interface CacheOptions<T> {
  /** e.g. 'pods'; used in the watch path and in logs. */
  readonly resource: 'pods' | 'services' | 'networkpolicies' | 'nodes';
  /** None for a cluster-scoped resource (nodes). */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly list: () => Promise<Listed<T>>;
  /** Gives up on a watch request the server does not answer (client.ts: watcher). */
  readonly watch: Watch;
  readonly retry: RetryContext;
  readonly logger: Logger;
  readonly resyncMs: number;
  readonly now: () => number;
  /**
   * Told of every object version the cache takes (list, watch, our writes' answers), not only the
   * newest a read finds: a state that lasts seconds between two reads is seen (pull-errors.ts).
   */
  readonly seen?: (obj: T) => void;
}

/**
 * Asked of the server with every watch, as client-go's reflectors do: it ends the stream then at the
 * latest, so even a watch gone quiet is started again from the last version seen.
 */
const WATCH_TIMEOUT_SECONDS = 300;

const numeric = (v: string | undefined): v is string => v !== undefined && /^\d+$/.test(v);

/** etcd versions are integers; if a server's are not, the newest write simply wins. */
function newer(candidate: string | undefined, current: string | undefined): boolean {
  if (!numeric(candidate) || !numeric(current)) return true;
  return BigInt(candidate) >= BigInt(current);
}

/**
 * The objects of one resource boa reads (those it owns, by label; or the Nodes), kept by a list then a
 * watch from the list's resourceVersion, the way controllers do: a watch that ends is resumed from the
 * last version seen; 410 Expired or any error means a fresh list; and a full relist, the watch started
 * again, at least every `resyncMs`, or whenever the watch is down when read, so boa always compares
 * against what is, not what it last heard.
 */
export class ObjectCache<T extends { metadata?: Meta }> {
  private readonly items = new Map<string, T>();
  /**
   * Versions at which objects were seen deleted: the answer to our own DELETE can arrive after the
   * watch's DELETED event, and must not bring the object back.
   */
  private readonly tombstones = new Map<string, string>();
  /**
   * Our writes' answers while a list is on the wire, one map per list: a list that left before a write
   * answers without it, and the write would be lost until the watch replays it (found in review: a log
   * read's relist racing a reconcile's create).
   */
  private readonly writtenDuringLists = new Set<Map<string, T>>();
  private version = '';
  private listedAt = -Infinity;
  private watching = false;
  /** Bumped for every watch started or dropped, so callbacks of an old watch are ignored. */
  private watchId = 0;
  private watchAbort: AbortController | undefined;
  private closed = false;

  constructor(private readonly options: CacheOptions<T>) {}

  /** The objects as of now: relisted first when never listed, the watch is down or the resync is due. */
  async current(): Promise<T[]> {
    const o = this.options;
    if (!this.watching) await this.relist();
    else if (o.now() - this.listedAt >= o.resyncMs) {
      // Only the timed resync, the watch up: a LIST refused (API Priority and Fairness throttles LISTs
      // first) leaves what the watch keeps, tried again at the next read, rather than failing the pass
      // (found in review: every pass failed while LISTs were throttled).
      try {
        await this.relist();
      } catch (error) {
        o.logger.warn(
          { event: 'kube.resync.failed', resource: o.resource, error: String(error) },
          'resync failed; the watch keeps the objects, and the next read lists again',
        );
      }
    }
    return [...this.items.values()];
  }

  /** The objects as last heard, without asking the server. */
  snapshot(): T[] {
    return [...this.items.values()];
  }

  /** One object by name, as last heard. */
  get(name: string): T | undefined {
    return this.items.get(name);
  }

  /** Records the server's answer to our own write at once, before its watch event arrives. */
  put(obj: T): void {
    const name = obj.metadata?.name;
    if (!name) return;
    const tombstone = this.tombstones.get(name);
    const version = obj.metadata?.resourceVersion;
    if (tombstone && (!numeric(version) || !numeric(tombstone) || BigInt(version) <= BigInt(tombstone)))
      return;
    for (const written of this.writtenDuringLists) {
      if (newer(version, written.get(name)?.metadata?.resourceVersion)) written.set(name, obj);
    }
    const known = this.items.get(name);
    if (!known || newer(obj.metadata?.resourceVersion, known.metadata?.resourceVersion)) {
      this.items.set(name, obj);
      this.options.seen?.(obj);
    }
  }

  /** What the watch said may be behind (a write's answer told otherwise): the next read lists again. */
  invalidate(): void {
    if (this.closed) return;
    this.watchId++;
    this.watchAbort?.abort();
    this.watchAbort = undefined;
    this.watching = false;
  }

  forget(name: string): void {
    this.items.delete(name);
    for (const written of this.writtenDuringLists) written.delete(name);
  }

  close(): void {
    this.closed = true;
    this.watchId++;
    this.watchAbort?.abort();
    this.watching = false;
  }

  private async relist(): Promise<void> {
    const o = this.options;
    const written = new Map<string, T>();
    this.writtenDuringLists.add(written);
    let listed: Listed<T>;
    try {
      listed = await withKubeRetry(`list ${o.resource}`, o.list, o.retry);
    } finally {
      this.writtenDuringLists.delete(written);
    }
    this.items.clear();
    this.tombstones.clear();
    for (const item of listed.items) {
      if (!item.metadata?.name) continue;
      this.items.set(item.metadata.name, item);
      o.seen?.(item);
    }
    this.version = listed.metadata?.resourceVersion ?? '';
    // Only writes after the list's version: an older one the list leaves out was deleted since.
    for (const obj of written.values()) {
      const version = obj.metadata?.resourceVersion;
      if (numeric(version) && numeric(this.version) && BigInt(version) > BigInt(this.version)) this.put(obj);
    }
    this.listedAt = o.now();
    this.startWatch();
  }

  /**
   * Starts a watch from the last version seen, not waited for: its request is answered only when the
   * server sends the headers, and a read (so a reconcile) must not hang on a server that never does.
   * A watch that fails, the watcher's timeout included, leaves the watch down: the next read relists.
   */
  private startWatch(): void {
    if (this.closed) return;
    // The id first: aborting the old watch ends it at once, and an end seen as the current watch's
    // would resume it, two watches then started where one was meant (found by the Node watch's test).
    const id = ++this.watchId;
    this.watchAbort?.abort();
    this.watchAbort = undefined;
    this.watching = true;
    this.openWatch(id).catch((error: unknown) => this.watchFailed(id, error));
  }

  private async openWatch(id: number): Promise<void> {
    const o = this.options;
    const group = o.resource === 'networkpolicies' ? '/apis/networking.k8s.io/v1' : '/api/v1';
    const scope = o.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(o.namespace)}`;
    const path = `${group}${scope}/${o.resource}`;
    const params = {
      ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
      resourceVersion: this.version,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS,
    };
    const controller = await o.watch.watch(
      path,
      params,
      (type, obj) => {
        if (id === this.watchId) this.onEvent(type, obj as T & { code?: number });
      },
      (error) => {
        if (error && (error as Error).name !== 'AbortError') this.watchFailed(id, error);
        // The server ended the stream (its timeout): resume from the last version seen.
        else if (id === this.watchId && !this.closed) this.startWatch();
      },
    );
    // Known only once the server answered: a watch replaced or closed meanwhile is ended now.
    if (id === this.watchId) this.watchAbort = controller;
    else controller.abort();
  }

  private watchFailed(id: number, error: unknown): void {
    if (id !== this.watchId || this.closed) return; // replaced or closed on purpose
    this.watching = false;
    this.options.logger.warn(
      { event: 'kube.watch.failed', resource: this.options.resource, error: String(error) },
      'watch failed; relisting on next read',
    );
  }

  private onEvent(type: string, obj: T & { code?: number }): void {
    if (type === 'ERROR') {
      // 410 Expired: our version was compacted away; the next read relists.
      this.options.logger.info(
        { event: 'kube.watch.expired', resource: this.options.resource, code: obj.code },
        'watch expired',
      );
      this.watching = false;
      this.watchId++;
      this.watchAbort?.abort();
      return;
    }
    const version = obj.metadata?.resourceVersion;
    if (version) this.version = version;
    if (type === 'BOOKMARK') return;
    const name = obj.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') {
      // Not a newer object of the same name (a pod deleted and created again, whose create answer came
      // before this event): the executor would take it for gone.
      const known = this.items.get(name)?.metadata?.resourceVersion;
      if (!(numeric(known) && numeric(version) && BigInt(known) > BigInt(version))) this.items.delete(name);
      if (version) this.tombstones.set(name, version);
      // Nor is a write a list on the wire will keep: it is gone since.
      for (const written of this.writtenDuringLists) {
        const kept = written.get(name)?.metadata?.resourceVersion;
        if (!(numeric(kept) && numeric(version) && BigInt(kept) > BigInt(version))) written.delete(name);
      }
    } else this.put(obj);
  }
}
