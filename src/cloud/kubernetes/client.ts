import {
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  type RequestContext,
  type ResponseContext,
  ServerConfiguration,
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
 * A CoreV1Api whose every request gives up after `timeoutMs` (the generated client sets none, so a
 * hung API server would hang a reconcile forever); the retry layer retries the timeout.
 */
export function coreApi(kc: KubeConfig, timeoutMs: number): CoreV1Api {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster: set KUBECONFIG or run in a pod');
  const timeout = {
    pre: async (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return context;
    },
    post: async (context: ResponseContext) => context,
  };
  return new CoreV1Api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [timeout],
    }),
  );
}

/**
 * A Watch whose request gives up when the server has not sent the response headers within `timeoutMs`.
 * client-node 1.4's Watch makes a 30 s timeout signal and then overwrites it, so a watch the server
 * accepts but never answers would be waited for forever. node-fetch's `timeout`, passed through the
 * kubeconfig's fetch options, ends only that wait: the stream itself is read apart, without a limit.
 */
export function watcher(kc: KubeConfig, timeoutMs: number): Watch {
  const config = Object.create(kc) as KubeConfig;
  config.applyToFetchOptions = async (opts) => ({
    ...(await kc.applyToFetchOptions(opts)),
    timeout: timeoutMs,
  });
  return new Watch(config);
}
