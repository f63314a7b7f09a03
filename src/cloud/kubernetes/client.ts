import {
  type Configuration,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  NetworkingV1Api,
  type RequestContext,
  type ResponseContext,
  ServerConfiguration,
  StorageV1Api,
  Watch,
} from '@kubernetes/client-node';

/**
 * The kubeconfig in effect: in a pod, its service account (KUBERNETES_SERVICE_HOST); elsewhere KUBECONFIG
 * or ~/.kube/config, as kubectl reads them.
 */
export function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/**
 * An API group's client whose every request gives up after `timeoutMs` (the generated client sets none,
 * so a hung API server would hang a reconcile forever); the retry layer retries the timeout.
 */
function apiClient<T>(kc: KubeConfig, timeoutMs: number, Api: new (config: Configuration) => T): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster: set KUBECONFIG or run in a pod');
  const timeout = {
    pre: async (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return context;
    },
    post: async (context: ResponseContext) => context,
  };
  return new Api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [timeout],
    }),
  );
}

/** core/v1: pods, services, secrets, nodes. */
export const coreApi = (kc: KubeConfig, timeoutMs: number): CoreV1Api => apiClient(kc, timeoutMs, CoreV1Api);

/** storage.k8s.io/v1: the StorageClass of a checkpoint claim still Pending at submission (claims.ts). */
export const storageApi = (kc: KubeConfig, timeoutMs: number): StorageV1Api =>
  apiClient(kc, timeoutMs, StorageV1Api);

/** networking.k8s.io/v1: the jobs' NetworkPolicies. */
export const networkingApi = (kc: KubeConfig, timeoutMs: number): NetworkingV1Api =>
  apiClient(kc, timeoutMs, NetworkingV1Api);

/** coordination.k8s.io/v1: the Lease claiming the jobs namespace (namespace-claim.ts). */
export const coordinationApi = (kc: KubeConfig, timeoutMs: number): CoordinationV1Api =>
  apiClient(kc, timeoutMs, CoordinationV1Api);

/**
 * The kubeconfig with a limit on the wait for the server's response headers. client-node 1.4's Watch
 * (and the informers built on it) makes a 30 s timeout signal and then overwrites it, so a watch the
 * server accepts but never answers would be waited for forever. node-fetch's `timeout`, passed through
 * the kubeconfig's fetch options, ends only that wait: the stream itself is read apart, without a limit.
 */
export function withWatchTimeout(kc: KubeConfig, timeoutMs: number): KubeConfig {
  const config = Object.create(kc) as KubeConfig;
  config.applyToFetchOptions = async (opts) => ({
    ...(await kc.applyToFetchOptions(opts)),
    timeout: timeoutMs,
  });
  return config;
}

/**
 * A watch that ends this soon with no event is taken for a failure, as client-go's reflector takes a
 * "very short watch": a proxy or load balancer in front of the API server, or a server shutting down,
 * can answer every watch and close it at once, and resuming at once would loop (measured: about 1,000
 * watch requests a second).
 */
export const SHORT_WATCH_MS = 1000;

/**
 * A Watch that gives up on a server that does not answer within `timeoutMs` (withWatchTimeout), and
 * reports a watch ended within SHORT_WATCH_MS with no event as an error, so that its caller relists or
 * waits before watching again instead of resuming at once.
 */
export function watcher(kc: KubeConfig, timeoutMs: number): Watch {
  const inner = new Watch(withWatchTimeout(kc, timeoutMs));
  const guarded = Object.create(inner) as Watch;
  guarded.watch = (path, params, callback, done) => {
    const started = performance.now();
    let events = 0;
    return inner.watch(
      path,
      params,
      (type, obj, raw) => {
        events += 1;
        callback(type, obj, raw);
      },
      (error) => {
        if (error || events > 0 || performance.now() - started >= SHORT_WATCH_MS) return done(error);
        done(new Error(`watch of ${path} ended at once with no event (a proxy, or a server shutting down?)`));
      },
    );
  };
  return guarded;
}
