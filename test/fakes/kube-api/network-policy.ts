import type { KubeObject } from './objects.ts';

/** A pod as the policies see it: its namespace and labels. */
export interface PodRef {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}

/** A metav1.LabelSelector: every matchLabels pair and every expression must hold ({} selects all). */
export function selects(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>) {
  if (!selector) return false;
  const pairs = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    pairs &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      const value = labels[key];
      if (operator === 'In') return value !== undefined && values.includes(value);
      if (operator === 'NotIn') return value === undefined || !values.includes(value);
      return operator === 'Exists' ? value !== undefined : value === undefined;
    })
  );
}

/** The namespace's only labels here: the one every namespace gets (kubernetes.io/metadata.name). */
const namespaceLabels = (namespace: string) => ({ 'kubernetes.io/metadata.name': namespace });

/** A peer of a policy in `policyNamespace` naming `pod`; an ipBlock is not evaluated (pods have no IP here). */
function names(peer: Peer, policyNamespace: string, pod: PodRef): boolean {
  if (!peer.podSelector && !peer.namespaceSelector) return false;
  const namespace = peer.namespaceSelector
    ? selects(peer.namespaceSelector, namespaceLabels(pod.namespace))
    : pod.namespace === policyNamespace;
  return namespace && (!peer.podSelector || selects(peer.podSelector, pod.labels));
}

/** One direction: `subject` is isolated by the policies selecting it for `type`, and one must allow `peer`. */
function allowed(policies: readonly KubeObject[], type: 'Ingress' | 'Egress', subject: PodRef, peer: PodRef) {
  const isolating = policies.filter(
    (p) =>
      p.metadata.namespace === subject.namespace &&
      (p.spec?.policyTypes ?? []).includes(type) &&
      selects(p.spec?.podSelector, subject.labels),
  );
  if (isolating.length === 0) return true;
  const rules: { from?: Peer[]; to?: Peer[] }[][] = isolating.map((p) =>
    type === 'Ingress' ? (p.spec.ingress ?? []) : (p.spec.egress ?? []),
  );
  return isolating.some((policy, i) =>
    rules[i]!.some((rule) => {
      const peers = (type === 'Ingress' ? rule.from : rule.to) ?? [];
      return peers.length === 0 || peers.some((p) => names(p, policy.metadata.namespace!, peer));
    }),
  );
}

/**
 * Whether NetworkPolicies let `from` open a connection to `to` (any port: ports are not evaluated), as
 * an enforcing CNI decides: `from`'s egress and `to`'s ingress must both be allowed. The fake carries
 * no traffic; this reads the stored policies the way the network would.
 */
export function connectionAllowed(policies: readonly KubeObject[], from: PodRef, to: PodRef): boolean {
  return allowed(policies, 'Egress', from, to) && allowed(policies, 'Ingress', to, from);
}
