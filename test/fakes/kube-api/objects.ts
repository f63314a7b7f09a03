import { randomUUID } from 'node:crypto';

/** The resources the fake serves; the plural is the REST path segment. */
export type Resource =
  | 'pods'
  | 'services'
  | 'secrets'
  | 'nodes'
  | 'events'
  | 'persistentvolumeclaims'
  | 'networkpolicies'
  | 'storageclasses'
  | 'leases';

export const RESOURCES: readonly Resource[] = [
  'pods',
  'services',
  'secrets',
  'nodes',
  'events',
  'persistentvolumeclaims',
  'networkpolicies',
  'storageclasses',
  'leases',
];

export const KIND_OF: Record<Resource, string> = {
  pods: 'Pod',
  services: 'Service',
  secrets: 'Secret',
  nodes: 'Node',
  events: 'Event',
  persistentvolumeclaims: 'PersistentVolumeClaim',
  networkpolicies: 'NetworkPolicy',
  storageclasses: 'StorageClass',
  leases: 'Lease',
};

/** Group and version: core ones are served under /api/v1, the others under /apis/<group>/<version>. */
export const API_VERSION_OF: Record<Resource, string> = {
  pods: 'v1',
  services: 'v1',
  secrets: 'v1',
  nodes: 'v1',
  events: 'v1',
  persistentvolumeclaims: 'v1',
  networkpolicies: 'networking.k8s.io/v1',
  storageclasses: 'storage.k8s.io/v1',
  leases: 'coordination.k8s.io/v1',
};

export function isNamespaced(resource: Resource): boolean {
  return resource !== 'nodes' && resource !== 'storageclasses';
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

/** Any stored object: metadata is typed, the rest is whatever the client sent. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
  [key: string]: unknown;
}

/** An API error, answered as a `Status` object with the same code and reason the real server uses. */
export class KubeError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
  }
}

export const notFound = (resource: Resource, name: string) =>
  new KubeError(404, 'NotFound', `${resource} "${name}" not found`);

export const alreadyExists = (resource: Resource, name: string) =>
  new KubeError(409, 'AlreadyExists', `${resource} "${name}" already exists`);

export const conflict = (resource: Resource, name: string) =>
  new KubeError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
  );

export const invalid = (resource: Resource, name: string, why: string) =>
  new KubeError(422, 'Invalid', `${KIND_OF[resource]} "${name}" is invalid: ${why}`);

export const newUid = (): string => randomUUID();

export function clone<T>(value: T): T {
  return structuredClone(value);
}

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The validation real clients trip over most: names, label values, and a pod's containers. */
export function validate(resource: Resource, obj: KubeObject): void {
  const name = obj.metadata.name;
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw invalid(resource, name, 'metadata.name: must be a lowercase RFC 1123 subdomain');
  }
  if ((resource === 'pods' || resource === 'services') && name.length > 63) {
    throw invalid(resource, name, 'metadata.name: must be no more than 63 characters');
  }
  for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) {
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
      throw invalid(resource, name, `metadata.labels: Invalid value: "${String(value)}" for ${key}`);
    }
  }
  if (resource === 'secrets') {
    for (const [key, value] of Object.entries((obj.data ?? {}) as Record<string, unknown>)) {
      if (!SECRET_KEY.test(key) || typeof value !== 'string' || !BASE64.test(value))
        throw invalid(resource, name, `data[${key}]: must be a valid key with a base64 value`);
    }
  }
  if (resource === 'networkpolicies') {
    const types: unknown = obj.spec?.policyTypes;
    if (!Array.isArray(types) || types.some((t) => t !== 'Ingress' && t !== 'Egress'))
      throw invalid(resource, name, 'spec.policyTypes: Unsupported value: must be Ingress or Egress');
  }
  if (resource === 'pods') {
    const containers = obj.spec?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      throw invalid(resource, name, 'spec.containers: Required value');
    }
    for (const [i, c] of containers.entries()) {
      if (!c?.name) throw invalid(resource, name, `spec.containers[${i}].name: Required value`);
      if (!c?.image) throw invalid(resource, name, `spec.containers[${i}].image: Required value`);
    }
  }
}

/** An update the real server refuses whatever its body: an immutable Secret's data, or its immutability. */
export function validateUpdate(resource: Resource, current: KubeObject, next: KubeObject): void {
  if (resource !== 'secrets' || current.immutable !== true) return;
  if (next.immutable !== true || JSON.stringify(next.data ?? {}) !== JSON.stringify(current.data ?? {}))
    throw invalid(
      resource,
      current.metadata.name,
      'data: Forbidden: field is immutable when `immutable` is set',
    );
}
