/**
 * An in-process fake Kubernetes API server for tests: a real HTTP server on 127.0.0.1:<random port>
 * speaking enough of core/v1 for the real @kubernetes/client-node. No kube-apiserver can be installed
 * here, so boa's Kubernetes adapters are tested against this, not against a real cluster.
 *
 * Served (REST, JSON): pods, services, secrets, events, persistentvolumeclaims (namespaced; stored as
 * given, never bound: a pod mounting one that is missing, not Bound or being deleted waits, as below) and nodes
 * (cluster-scoped) under /api/v1; networkpolicies (namespaced) under /apis/networking.k8s.io/v1 (policyTypes checked, defaulted
 * as the real server does; stored, never enforced: there is no traffic); storageclasses (cluster-scoped)
 * under /apis/storage.k8s.io/v1 (volumeBindingMode defaulted to Immediate on a POST, as the real server
 * does; nothing is provisioned: a test sets a claim's status.phase itself); leases (namespaced) under
 * /apis/coordination.k8s.io/v1 (stored as given: nothing expires them; a PUT with a stale
 * resourceVersion is 409 Conflict, as below):
 * - create (POST; 409 AlreadyExists; 422 Invalid for bad names, label values, pods without containers),
 *   get, list (labelSelector: =, ==, !=, in, notin, exists, !exists; fieldSelector: metadata.name,
 *   metadata.namespace, spec.nodeName, status.phase, spec.unschedulable), list across namespaces.
 *   Secrets: type defaults to Opaque, stringData is merged into data (base64) on create, data values
 *   must be base64, and an `immutable: true` Secret's data cannot change (422).
 * - replace (PUT, also /status): a stale metadata.resourceVersion is 409 Conflict.
 * - patch (PATCH): application/merge-patch+json, application/strategic-merge-patch+json (as a merge
 *   patch: lists are replaced, not merged by key), application/json-patch+json; a resourceVersion in the
 *   patch is checked as with PUT. Cordon a node: merge patch {spec: {unschedulable: true}}.
 * - delete (DELETE, gracePeriodSeconds and propagationPolicy from the query or the DeleteOptions body,
 *   preconditions): a pod on a live node with a grace period > 0 becomes terminating (deletionTimestamp,
 *   MODIFIED) and is removed (DELETED) when its kubelet says so or the grace runs out (real time);
 *   anything else goes at once. Garbage collection: when an object is removed, its dependents (by
 *   ownerReferences uid) are deleted with their default grace (Orphan policy: references dropped
 *   instead), and a dependent created with an owner that no longer exists is collected too.
 * - watch (?watch=true): JSON lines ADDED/MODIFIED/DELETED filtered by selectors (an object leaving a
 *   selector is DELETED); from resourceVersion N it replays every change after N, from "0" or none it
 *   sends the current objects as ADDED first; a version older than the kept history (historyLimit, or
 *   after compact()) gets an ERROR event with a 410 Expired Status, as the real server answers.
 *   timeoutSeconds is honoured; closeWatches() ends all streams as a server restart would;
 *   stallWatches() leaves them open with no more events (a stream gone quiet without closing).
 * - pods/{name}/log (logs.ts): tailLines, timestamps, sinceTime, follow (open until the container ends or
 *   the pod goes); cutLogStreams() breaks the followed ones' connections.
 * - faults: faults.inject({status: 429|500|503|409, count, retryAfterSeconds, message, match}) fails the
 *   next matching requests with a Status body; {timeout: true} never answers them (the client must time out);
 *   {endAtOnce: true} answers 200 and ends the stream at once (a watch cut by a proxy); {after: promise}
 *   answers them as usual once the promise settles (requests held together read the same state);
 *   {applied: true} with a status or timeout makes the request as usual first, its answer (even an
 *   error's) lost: the injected status instead, or none (a write made whose answer never came back).
 *   By default faults match every request but watches.
 *
 * Control API for tests (no HTTP):
 * - kubelet.addNode({name, gpus, ready, zone, instanceId, instanceType, labels}) -> Node with
 *   allocatable/capacity nvidia.com/gpu, a Ready condition, spec.providerID aws:///<zone>/<instanceId>.
 * - kubelet.setNodeReady(name, ready), kubelet.removeNode(name, {collectPods}) (its pods are removed with
 *   it, unless collectPods is false: the pod garbage collector not run yet).
 * - kubelet.startPods(names?): Pending pods bound to a Ready node -> Running (containerStatuses running),
 *   or, as the kubelet's admission does, Failed with reason OutOfnvidia.com/gpu when the node's Running
 *   pods (terminating ones included) leave too few of its allocatable GPUs. env valueFrom.secretKeyRef
 *   is read from the pod's namespace (kubelet.environment(pod): what the container got); a missing
 *   Secret or key leaves the pod Pending, its container waiting with CreateContainerConfigError, and
 *   it is tried again (with autoStartMs, when a Secret is created). A pod mounting a volume claim that
 *   is missing, not Bound (status.phase) or being deleted (deletionTimestamp) stays Pending, its
 *   container waiting in ContainerCreating and PodReadyToStartContainers False, as the kubelet's volume
 *   manager leaves it (retried, with autoStartMs, when a claim is created or changed).
 * - kubelet.waitOn(pod, reason, message?): Pending, its containers waiting so (CreateContainerError,
 *   ErrImagePull: what the kubelet retries); startPods([pod]) starts it.
 * - kubelet.exit(pod, exitCode, reason?): Succeeded (0) or Failed, containerStatuses[].state.terminated.
 * - kubelet.kill(pod, reason = 'OOMKilled'): exit code 137 from outside.
 * - kubelet.finishTermination(pod?): terminating pods whose containers stopped are removed.
 * - Options kubelet.autoStartMs / autoStopMs make the kubelet start pods and finish terminations by itself.
 * - pods(namespace?), services(namespace?), secrets(namespace?), networkPolicies(namespace?),
 *   leases(namespace?), nodes(): the stored objects; requests: every request answered (method, path,
 *   query, status); store.compact(); store.currentVersion().
 * - connectionAllowed(policies, from, to) (network-policy.ts): whether policies let one pod connect to
 *   another, as an enforcing CNI would decide (label selectors, namespaces; not ports or ipBlocks).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiCore } from './core.ts';
import type { PodLogs } from './logs.ts';
import { Faults } from './faults.ts';
import { FakeKubelet, type KubeletOptions } from './kubelet.ts';
import type { KubeObject } from './objects.ts';
import { FakeKubeHttpServer, type RequestRecord } from './server.ts';
import { KubeStore } from './store.ts';

export type { Fault, RequestInfo } from './faults.ts';
export type { KubeletOptions, NodeOptions } from './kubelet.ts';
export type { KubeObject } from './objects.ts';
export { connectionAllowed, type PodRef } from './network-policy.ts';
export type { RequestRecord } from './server.ts';

export interface FakeKubeApiOptions {
  readonly kubelet?: KubeletOptions;
  /** Changes kept for watches to resume from (default 10 000); older versions get 410 Expired. */
  readonly historyLimit?: number;
  /** Timestamps (creation, deletion, container start and finish); default the wall clock. */
  readonly now?: () => number;
  /**
   * A pod deleted while bound to a node that is gone stays Terminating, as the real API server leaves it
   * (no kubelet confirms it), until its grace runs out in real time, standing in for the pod garbage
   * collector (40 s after it sees the node gone). Default: removed at once, as if the collector had run.
   */
  readonly orphanedPodsWait?: boolean;
}

export interface FakeKubeApi {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly kubelet: FakeKubelet;
  readonly faults: Faults;
  readonly store: KubeStore;
  readonly requests: readonly RequestRecord[];
  /** A kubeconfig pointing at the fake (token auth; the fake accepts anything). */
  kubeConfig(namespace?: string): KubeConfig;
  pods(namespace?: string): KubeObject[];
  nodes(): KubeObject[];
  services(namespace?: string): KubeObject[];
  secrets(namespace?: string): KubeObject[];
  networkPolicies(namespace?: string): KubeObject[];
  leases(namespace?: string): KubeObject[];
  closeWatches(): void;
  /** Open watch streams get no more events and stay open (until their timeoutSeconds). */
  stallWatches(): void;
  /** Breaks every followed log's connection mid-stream (a proxy's idle timeout, a dropped network). */
  cutLogStreams(): void;
  /** Followed logs whose connection is open now. */
  openLogStreams(): number;
  /** The pods' output, and how its lines are stamped (utcOffsetMinutes, coarse). */
  readonly logs: PodLogs;
  openWatches(): number;
  close(): Promise<void>;
}

export async function startFakeKubeApi(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const now = options.now ?? Date.now;
  const store = new KubeStore(options.historyLimit ?? 10_000, now);
  const core = new KubeApiCore(store, now, { orphanedPodsWait: options.orphanedPodsWait });
  const faults = new Faults();
  const kubelet = new FakeKubelet(core, options.kubelet ?? {}, now);
  const server = new FakeKubeHttpServer(core, faults);
  const url = await server.listen();
  return {
    url,
    kubelet,
    faults,
    store,
    requests: server.requests,
    kubeConfig(namespace = 'default') {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'tester', token: 'fake-token' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'tester', namespace }],
        currentContext: 'fake',
      });
      return kc;
    },
    pods: (namespace) => store.list('pods', namespace),
    nodes: () => store.list('nodes'),
    services: (namespace) => store.list('services', namespace),
    secrets: (namespace) => store.list('secrets', namespace),
    networkPolicies: (namespace) => store.list('networkpolicies', namespace),
    leases: (namespace) => store.list('leases', namespace),
    closeWatches: () => server.closeWatches(),
    stallWatches: () => server.stallWatches(),
    cutLogStreams: () => server.cutLogStreams(),
    logs: core.logs,
    openLogStreams: () => server.openLogStreams(),
    openWatches: () => server.openWatches(),
    async close() {
      kubelet.close();
      await server.close();
    },
  };
}
