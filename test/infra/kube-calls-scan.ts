// Reads the Kubernetes API requests out of boa's code, for test/infra/kube-permissions.test.ts: each
// client-node method called on an API object (api.createNamespacedPod, storage.readStorageClass, ...),
// each pod log stream (new Log(...)) and each watch the cache opens ({ resource: 'pods', ... }).
import { codeOf, sourceFiles } from './aws-calls-scan.ts';

export interface KubeCall {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  /** In the jobs namespace (the Role), or cluster-wide (the ClusterRole). */
  readonly namespaced: boolean;
  readonly file: string;
  readonly what: string;
}

/** client-node's kind in a method's name -> its API group and resource. */
export const KINDS: Readonly<Record<string, readonly [string, string]>> = {
  Pod: ['', 'pods'],
  PodLog: ['', 'pods/log'],
  Service: ['', 'services'],
  Secret: ['', 'secrets'],
  PersistentVolumeClaim: ['', 'persistentvolumeclaims'],
  Node: ['', 'nodes'],
  NetworkPolicy: ['networking.k8s.io', 'networkpolicies'],
  StorageClass: ['storage.k8s.io', 'storageclasses'],
  Lease: ['coordination.k8s.io', 'leases'],
};

const VERBS: Readonly<Record<string, string>> = {
  create: 'create',
  delete: 'delete',
  deleteCollection: 'deletecollection',
  list: 'list',
  read: 'get',
  patch: 'patch',
  replace: 'update',
};

const CLUSTER_SCOPED = new Set(['nodes', 'storageclasses']);

/** The API objects' names in boa's code (coreApi, storageApi, ... as deps, fields and locals). */
const METHOD_CALL = /\b(?:api|core|storage|networking|coordination)\.(\w+)\(/g;
const METHOD =
  /^(deleteCollection|create|delete|list|read|patch|replace)(Namespaced)?(\w+?)(ForAllNamespaces)?$/;

export function kubeCallsIn(file: string): KubeCall[] {
  const text = codeOf(file);
  const calls: KubeCall[] = [];
  const kind = (name: string, what: string) => {
    const found = KINDS[name];
    if (!found) throw new Error(`${file}: ${what} is a kind not in KINDS (test/infra/kube-calls-scan.ts)`);
    return found;
  };
  for (const [, method] of text.matchAll(METHOD_CALL)) {
    const parts = METHOD.exec(method!);
    if (!parts) continue; // Not a request (e.g. api.close()): client-node's methods all match METHOD.
    const [, op, namespacedWord, name, all] = parts;
    const [group, resource] = kind(name!, method!);
    const namespaced = namespacedWord !== undefined && all === undefined;
    calls.push({ group, resource, verb: VERBS[op!]!, namespaced, file, what: method! });
  }
  // A pod's log, read or followed by client-node's Log helper: GET .../pods/NAME/log.
  for (const _ of text.matchAll(/\bnew Log\(/g)) {
    calls.push({ group: '', resource: 'pods/log', verb: 'get', namespaced: true, file, what: 'new Log' });
  }
  // The cache (src/cloud/kubernetes/cache.ts) watches what it lists: { resource: 'pods', ... }.
  for (const [, resource] of text.matchAll(/\bresource:\s*'(pods|services|networkpolicies|nodes)',/g)) {
    const group = resource === 'networkpolicies' ? 'networking.k8s.io' : '';
    const namespaced = !CLUSTER_SCOPED.has(resource!);
    calls.push({ group, resource: resource!, verb: 'watch', namespaced, file, what: `watch ${resource}` });
  }
  return calls;
}

/** Every Kubernetes request in boa's code (src/). */
export function kubeCalls(): KubeCall[] {
  return sourceFiles('src').flatMap(kubeCallsIn);
}
