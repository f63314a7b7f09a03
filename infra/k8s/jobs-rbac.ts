/**
 * What the Kubernetes executor (src/cloud/kubernetes) needs, and nothing more: pods and services in the
 * jobs namespace (create, delete, get, list, watch: no update, no patch, no exec), pods' logs (get: `boa
 * jobs logs`), secrets (create only: each job's token), network policies (create, list, watch: the policy
 * letting only a job's own pods connect to them, kept level-triggered), volume claims (get: a job's
 * checkpoint claim, checked at submission), the Lease claiming the namespace for this boa (get and
 * update on it by name, create), and cluster-wide (neither is namespaced): nodes, list and watch, and patch for the node
 * reconciler's cordon; storage classes, get (a Pending claim's class).
 */

import { CLAIM_LEASE_NAME } from '../../src/cloud/kubernetes/names.ts';

export const JOBS_ROLE = 'boa-executor';
export const NODES_CLUSTER_ROLE = 'boa-node-reader';

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  /** The objects the rule is limited to, by name; all of the resources when absent. */
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

export const JOBS_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['pods', 'services'], verbs: ['create', 'delete', 'get', 'list', 'watch'] },
  // Read-only: the replicas' output for GET /v1/jobs/{id}/logs.
  { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
  // Each job's token Secret: created before its pods, and garbage-collected with its Service (its
  // owner), so no delete; never read back (AlreadyExists is enough: its name carries its Service's uid
  // and the token never changes), so no get, list or watch: boa never reads a Secret of the namespace
  // (image pull secrets among them).
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
  // Each job's NetworkPolicy: created before its pods and collected with its Service, like the Secret,
  // and watched (list, watch: a policy holds nothing secret), so one deleted while the job runs is made
  // again at the next pass.
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['create', 'list', 'watch'] },
  // A job's checkpoint volume claim, read at its submission (src/cloud/kubernetes/claims.ts): one that
  // is missing, not ReadWriteMany or not Bound is refused. Never written: the claims are the operator's.
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get'] },
  // The Lease `boa-owner` claiming the namespace for one boa (src/cloud/kubernetes/namespace-claim.ts):
  // read every pass, created once, updated to renew or take over a lapsed claim. Never deleted, listed
  // or watched: releasing a claim is the operator's (kubectl delete lease).
  // get and update on that Lease alone; create cannot be limited by name in Kubernetes RBAC.
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    resourceNames: [CLAIM_LEASE_NAME],
    verbs: ['get', 'update'],
  },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
];

export const NODE_RULES: readonly PolicyRule[] = [
  // list and watch: the Node informer (src/cloud/aws/kube-cluster-nodes.ts), which never reads one node by
  // name (no get), and list: the executor's read of a stuck pod's node, a list by metadata.name
  // (src/cloud/kubernetes/stuck-pods.ts); patch: the node reconciler cordons the nodes it removes
  // (spec.unschedulable; docs/nodes.md).
  { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch', 'patch'] },
  // list, cluster-wide: the GPU pods boa did not create on its GPU nodes, one list per node by
  // spec.nodeName (src/cloud/aws/foreign-gpu-pods.ts); it reads no pod's contents beyond its requests.
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
];

/** In the same ClusterRole as NODE_RULES (boa's cluster-wide reads), apart for the tests' accounting. */
export const STORAGE_CLASS_RULES: readonly PolicyRule[] = [
  // get: the class of a checkpoint claim still Pending at submission (src/cloud/kubernetes/claims.ts),
  // whose volumeBindingMode tells a claim that never binds for boa's pods (WaitForFirstConsumer) from
  // one still being provisioned (Immediate). A class holds nothing secret.
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
];

const labels = { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'executor' };

/**
 * The jobs' namespace: baseline Pod Security (training images often run as root, which restricted
 * forbids; baseline still forbids privileged pods, host namespaces and hostPath).
 */
export function jobsNamespaceManifest(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'baseline' } },
  };
}

export interface ExecutorRbacOptions {
  readonly jobsNamespace: string;
  /** boa's own service account. */
  readonly serviceAccount: { readonly name: string; readonly namespace: string };
}

/** Role and RoleBinding in the jobs namespace; ClusterRole and ClusterRoleBinding for nodes and storage classes. */
export function executorRbacManifests(options: ExecutorRbacOptions): Record<string, unknown>[] {
  const subject = { kind: 'ServiceAccount', ...options.serviceAccount };
  const rbac = 'rbac.authorization.k8s.io';
  const rules = (list: readonly PolicyRule[]) => list.map((r) => ({ ...r }));
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: JOBS_ROLE, namespace: options.jobsNamespace, labels },
      rules: rules(JOBS_RULES),
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: JOBS_ROLE, namespace: options.jobsNamespace, labels },
      roleRef: { apiGroup: rbac, kind: 'Role', name: JOBS_ROLE },
      subjects: [subject],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: NODES_CLUSTER_ROLE, labels },
      rules: rules([...NODE_RULES, ...STORAGE_CLASS_RULES]),
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: NODES_CLUSTER_ROLE, labels },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: NODES_CLUSTER_ROLE },
      subjects: [subject],
    },
  ];
}
