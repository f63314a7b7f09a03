import { BOA_NAMESPACE, BOA_PORT } from './boa.ts';

/**
 * Least reach inside the cluster (enforced by the VPC CNI's network-policy agent, enabled in
 * cluster.ts). boa's namespace: only the jobs' pods reach boa's port; when the API is exposed, any
 * source does (the NLB's traffic arrives from node addresses after kube-proxy, its health checks from its
 * own: no narrower block admits them all), and the NLB's sourceRanges restrict who. The jobs' namespace: no ingress
 * but what a job's own NetworkPolicy allows (boa creates one per job, admitting only that job's pods:
 * src/cloud/kubernetes/network-policy.ts), so one team's job cannot reach another's rendezvous or
 * collectives; outward, pods reach the namespace (the receiving job's policy decides), boa, DNS and
 * anything but the instance metadata service, so a job cannot borrow the node's AWS role.
 */
export function networkPolicyManifests(options: {
  readonly jobsNamespace: string;
  readonly exposed: boolean;
}): Record<string, unknown>[] {
  const { jobsNamespace, exposed } = options;
  const inNamespace = (namespace: string) => ({
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
  });
  const dns = {
    to: [{ ...inNamespace('kube-system'), podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
    ports: [
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ],
  };
  const meta = (name: string, namespace: string) => ({
    name,
    namespace,
    labels: { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'network-policy' },
  });
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta('default-deny-ingress', BOA_NAMESPACE),
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta('boa-api', BOA_NAMESPACE),
      spec: {
        podSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'api' },
        },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: exposed
              ? [inNamespace(jobsNamespace), { ipBlock: { cidr: '0.0.0.0/0' } }]
              : [inNamespace(jobsNamespace)],
            ports: [{ protocol: 'TCP', port: BOA_PORT }],
          },
        ],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta('jobs', jobsNamespace),
      spec: {
        podSelector: {},
        // Ingress with no rule: denied unless a job's own policy lets its peers in.
        policyTypes: ['Ingress', 'Egress'],
        egress: [
          { to: [inNamespace(jobsNamespace)] },
          { to: [inNamespace(BOA_NAMESPACE)], ports: [{ protocol: 'TCP', port: BOA_PORT }] },
          dns,
          { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32'] } }] },
        ],
      },
    },
    {
      // Pods made by a boa from before per-job policies (no `boa.dev/network: job` label) keep the
      // namespace's ingress they were started with: a deploy applies this policy and the new boa
      // together, and until the new boa's first pass made their jobs' policies, their peers could not
      // reach them. Every pod boa makes now carries the label, so this admits none of them.
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta('jobs-before-isolation', jobsNamespace),
      spec: {
        podSelector: { matchExpressions: [{ key: 'boa.dev/network', operator: 'DoesNotExist' }] },
        policyTypes: ['Ingress'],
        ingress: [{ from: [inNamespace(jobsNamespace)] }],
      },
    },
  ];
}
