import {
  alreadyExists,
  API_VERSION_OF,
  clone,
  conflict,
  isNamespaced,
  KIND_OF,
  type KubeObject,
  KubeError,
  newUid,
  notFound,
  type Resource,
  RESOURCES,
  validate,
  validateUpdate,
} from './objects.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as a watch delivers it; `previous` lets a filtered watch see objects leave its selector. */
export interface StoreEvent {
  readonly resource: Resource;
  readonly type: EventType;
  readonly object: KubeObject;
  readonly previous?: KubeObject;
  readonly version: number;
}

export type Listener = (event: StoreEvent) => void;

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

const key = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

/**
 * The fake's etcd: objects by resource, one global resourceVersion counter, and a bounded history of
 * changes so watches resume from a version (older than the history: 410 Expired, as after compaction).
 */
export class KubeStore {
  private version = 0;
  private readonly objects = new Map<Resource, Map<string, KubeObject>>(RESOURCES.map((r) => [r, new Map()]));
  private history: StoreEvent[] = [];
  /** Versions at or below this one are compacted away. */
  private compactedTo = 0;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly historyLimit: number,
    private readonly now: () => number,
  ) {}

  currentVersion(): number {
    return this.version;
  }

  /** Drops the whole history, as etcd compaction does: any watch from an older version gets 410. */
  compact(): void {
    this.compactedTo = this.version;
    this.history = [];
  }

  get(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.objects.get(resource)!.get(key(namespace, name));
    return obj && clone(obj);
  }

  list(resource: Resource, namespace?: string): KubeObject[] {
    const all = [...this.objects.get(resource)!.values()];
    return all.filter((o) => namespace === undefined || o.metadata.namespace === namespace).map(clone);
  }

  /** The stored objects themselves, not copies: for the fake's own scans, which must not modify them. */
  peek(resource: Resource): IterableIterator<Readonly<KubeObject>> {
    return this.objects.get(resource)!.values();
  }

  create(resource: Resource, namespace: string | undefined, body: KubeObject): KubeObject {
    const meta = body.metadata ?? ({} as KubeObject['metadata']);
    const name = meta.name || (meta.generateName ? `${meta.generateName}${newUid().slice(0, 5)}` : '');
    if (!name) throw new KubeError(422, 'Invalid', `${KIND_OF[resource]}: metadata.name: Required value`);
    const ns = isNamespaced(resource) ? namespace : undefined;
    if (this.objects.get(resource)!.has(key(ns, name))) throw alreadyExists(resource, name);
    const obj: KubeObject = {
      ...clone(body),
      apiVersion: API_VERSION_OF[resource],
      kind: KIND_OF[resource],
      metadata: {
        ...clone(meta),
        name,
        ...(ns !== undefined ? { namespace: ns } : {}),
        uid: newUid(),
        resourceVersion: '',
        creationTimestamp: new Date(this.now()).toISOString(),
      },
    };
    delete obj.metadata.deletionTimestamp;
    delete obj.metadata.deletionGracePeriodSeconds;
    validate(resource, obj);
    this.put(resource, 'ADDED', obj);
    return clone(obj);
  }

  /**
   * Replaces an object with what `change` makes of it. `expectedVersion`, when given (a PUT's or a
   * precondition's resourceVersion), must be the stored one, else 409 Conflict.
   */
  update(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    change: (current: KubeObject) => KubeObject,
    expectedVersion?: string,
  ): KubeObject {
    const current = this.objects.get(resource)!.get(key(namespace, name));
    if (!current) throw notFound(resource, name);
    if (expectedVersion && expectedVersion !== current.metadata.resourceVersion)
      throw conflict(resource, name);
    const next = change(clone(current));
    // Identity is the server's, whatever the body says.
    next.apiVersion = API_VERSION_OF[resource];
    next.kind = KIND_OF[resource];
    next.metadata = {
      ...next.metadata,
      name: current.metadata.name,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      ...(current.metadata.namespace !== undefined ? { namespace: current.metadata.namespace } : {}),
      ...(current.metadata.deletionTimestamp !== undefined
        ? {
            deletionTimestamp: current.metadata.deletionTimestamp,
            deletionGracePeriodSeconds: current.metadata.deletionGracePeriodSeconds,
          }
        : {}),
    };
    validate(resource, next);
    validateUpdate(resource, current, next);
    if (
      JSON.stringify({ ...next, metadata: { ...next.metadata, resourceVersion: '' } }) ===
      JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: '' } })
    ) {
      return clone(current); // a no-op write keeps the version, as the real server does
    }
    this.put(resource, 'MODIFIED', next, current);
    return clone(next);
  }

  /** Marks an object as terminating (pods with a grace period); the kubelet removes it later. */
  markTerminating(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    graceSeconds: number,
  ): KubeObject {
    const current = this.objects.get(resource)!.get(key(namespace, name));
    if (!current) throw notFound(resource, name);
    if (current.metadata.deletionTimestamp) return clone(current);
    const next = clone(current);
    next.metadata.deletionTimestamp = new Date(this.now() + graceSeconds * 1000).toISOString();
    next.metadata.deletionGracePeriodSeconds = graceSeconds;
    this.put(resource, 'MODIFIED', next, current);
    return clone(next);
  }

  /** Removes an object for good (DELETED), then collects its dependents. */
  remove(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): KubeObject {
    const map = this.objects.get(resource)!;
    const current = map.get(key(namespace, name));
    if (!current) throw notFound(resource, name);
    map.delete(key(namespace, name));
    const gone = clone(current);
    this.version++;
    gone.metadata.resourceVersion = String(this.version);
    this.emit({ resource, type: 'DELETED', object: gone, version: this.version });
    this.collectDependents(current.metadata.uid, options.propagationPolicy ?? 'Background');
    return clone(gone);
  }

  /** Dependents whose owner is gone; the executor's pods are found here when their Service goes. */
  dependentsOf(uid: string): { resource: Resource; obj: KubeObject }[] {
    const found: { resource: Resource; obj: KubeObject }[] = [];
    for (const resource of RESOURCES) {
      for (const obj of this.objects.get(resource)!.values()) {
        if (obj.metadata.ownerReferences?.some((ref) => ref.uid === uid))
          found.push({ resource, obj: clone(obj) });
      }
    }
    return found;
  }

  uidExists(uid: string): boolean {
    for (const map of this.objects.values()) {
      for (const obj of map.values()) if (obj.metadata.uid === uid) return true;
    }
    return false;
  }

  /** Set by the server: deletes one dependent the way a DELETE with default options would. */
  deleteDependent: (resource: Resource, obj: KubeObject) => void = () => {};

  private collectDependents(uid: string, policy: string): void {
    for (const { resource, obj } of this.dependentsOf(uid)) {
      const { namespace, name } = obj.metadata;
      const refs = obj.metadata.ownerReferences!.filter((ref) => ref.uid !== uid);
      const remainingOwners = refs.filter((ref) => this.uidExists(ref.uid));
      if (policy === 'Orphan' || remainingOwners.length > 0) {
        this.update(resource, namespace, name, (o) => ({
          ...o,
          metadata: { ...o.metadata, ownerReferences: refs.length ? refs : undefined },
        }));
      } else {
        this.deleteDependent(resource, obj);
      }
    }
  }

  /**
   * Events after `fromVersion`, then live ones through `listener`, or 'expired' if `fromVersion` is older
   * than the history kept. The returned function stops the subscription.
   */
  subscribe(
    fromVersion: number,
    listener: Listener,
  ): { backlog: StoreEvent[]; stop: () => void } | 'expired' {
    if (fromVersion < this.compactedTo) return 'expired';
    const backlog = this.history.filter((e) => e.version > fromVersion);
    this.listeners.add(listener);
    return { backlog, stop: () => this.listeners.delete(listener) };
  }

  private put(resource: Resource, type: EventType, obj: KubeObject, previous?: KubeObject): void {
    this.version++;
    obj.metadata.resourceVersion = String(this.version);
    this.objects.get(resource)!.set(key(obj.metadata.namespace, obj.metadata.name), obj);
    this.emit({
      resource,
      type,
      object: clone(obj),
      ...(previous ? { previous: clone(previous) } : {}),
      version: this.version,
    });
  }

  private emit(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedTo = dropped[dropped.length - 1]!.version;
    }
    for (const listener of this.listeners) listener(event);
  }
}
