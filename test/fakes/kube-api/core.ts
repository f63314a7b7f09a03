import { PodLogs } from './logs.ts';
import { applyPatch } from './patch.ts';
import { conflict, KubeError, type KubeObject, notFound, type Resource } from './objects.ts';
import { type DeleteOptions, KubeStore } from './store.ts';

/** Default pod grace period when neither the DELETE nor the pod spec gives one (as the real server). */
export const DEFAULT_GRACE_SECONDS = 30;

/**
 * The API's verbs over the store, with the semantics clients rely on: pods with a grace period become
 * terminating (deletionTimestamp) instead of vanishing, and the kubelet removes them; PUT and patches
 * carrying a resourceVersion are optimistic (409 Conflict when stale); dependents are collected.
 */
export class KubeApiCore {
  /** Called when a pod starts terminating; the kubelet decides when it is gone. */
  onTerminating: (pod: KubeObject) => void = () => {};
  /** What each pod's container wrote, by namespace/name (the kubelet writes it; GET .../log reads it). */
  readonly logs: PodLogs;

  constructor(
    readonly store: KubeStore,
    now: () => number = Date.now,
    private readonly options: { readonly orphanedPodsWait?: boolean } = {},
  ) {
    this.logs = new PodLogs(now);
    store.deleteDependent = (resource, obj) => {
      try {
        this.delete(resource, obj.metadata.namespace, obj.metadata.name, {});
      } catch (error) {
        if (!(error instanceof KubeError && error.code === 404)) throw error;
      }
    };
  }

  create(resource: Resource, namespace: string | undefined, body: KubeObject): KubeObject {
    if (namespace && body.metadata?.namespace && body.metadata.namespace !== namespace) {
      throw new KubeError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const created = this.store.create(resource, namespace, withDefaults(resource, body));
    // The garbage collector also removes dependents created after their owner was deleted.
    const refs = created.metadata.ownerReferences ?? [];
    if (refs.length > 0 && !refs.some((ref) => this.store.uidExists(ref.uid))) {
      setImmediate(() => this.store.deleteDependent(resource, created));
    }
    return created;
  }

  get(resource: Resource, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(resource, namespace, name);
    if (!obj) throw notFound(resource, name);
    return obj;
  }

  /** PUT: replaces spec and metadata (or only status, for the status subresource). */
  replace(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    body: KubeObject,
    status: boolean,
  ): KubeObject {
    return this.store.update(
      resource,
      namespace,
      name,
      (current) => (status ? { ...current, status: body.status } : { ...body, status: current.status }),
      body.metadata?.resourceVersion,
    );
  }

  patch(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: unknown,
  ): KubeObject {
    const current = this.get(resource, namespace, name);
    const patched = applyPatch(contentType, current, body) as KubeObject;
    const expected = patched.metadata?.resourceVersion;
    if (expected !== current.metadata.resourceVersion) {
      if (expected) throw conflict(resource, name);
    }
    return this.store.update(resource, namespace, name, () => patched, current.metadata.resourceVersion);
  }

  delete(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions,
  ): KubeObject {
    const obj = this.get(resource, namespace, name);
    const pre = options.preconditions;
    if (
      (pre?.uid && pre.uid !== obj.metadata.uid) ||
      (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion)
    ) {
      throw conflict(resource, name);
    }
    if (resource === 'pods') {
      const grace =
        options.gracePeriodSeconds ?? obj.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
      const phase = obj.status?.phase;
      const onLiveNode =
        Boolean(obj.spec?.nodeName) &&
        (this.options.orphanedPodsWait ||
          this.store.get('nodes', undefined, obj.spec.nodeName) !== undefined) &&
        phase !== 'Succeeded' &&
        phase !== 'Failed';
      if (grace > 0 && onLiveNode) {
        const terminating = this.store.markTerminating(resource, namespace, name, grace);
        this.onTerminating(terminating);
        return terminating;
      }
    }
    return this.store.remove(resource, namespace, name, options);
  }
}

function withDefaults(resource: Resource, body: KubeObject): KubeObject {
  if (resource === 'pods') {
    return {
      ...body,
      spec: { terminationGracePeriodSeconds: DEFAULT_GRACE_SECONDS, restartPolicy: 'Always', ...body.spec },
      status: { phase: 'Pending', conditions: [] },
    };
  }
  if (resource === 'services') {
    const spec = { type: 'ClusterIP', ...body.spec };
    if (spec.clusterIP !== 'None')
      spec.clusterIP = `10.100.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    return { ...body, spec, status: { loadBalancer: {} } };
  }
  if (resource === 'secrets') {
    // stringData is write-only: merged into data, base64-encoded, as the real server does.
    const { stringData, ...rest } = body as KubeObject & { stringData?: Record<string, string> };
    const encoded = Object.entries(stringData ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]);
    const data = { ...(body.data as object | undefined), ...Object.fromEntries(encoded) };
    return { type: 'Opaque', ...rest, data };
  }
  if (resource === 'networkpolicies' && body.spec && !body.spec.policyTypes) {
    // As the real server: Ingress always, Egress when the policy has egress rules.
    const policyTypes = body.spec.egress ? ['Ingress', 'Egress'] : ['Ingress'];
    return { ...body, spec: { ...body.spec, policyTypes } };
  }
  if (resource === 'storageclasses' && !body.volumeBindingMode) {
    // As the real server: a class that names no binding mode binds at once.
    return { ...body, volumeBindingMode: 'Immediate' };
  }
  return body;
}
