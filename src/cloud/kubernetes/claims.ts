import { ApiException, type CoreV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { RetryContext, RetryPolicy } from '../retry.ts';
import { KubeCallError, kindOf, withKubeRetry } from './retry.ts';

/**
 * At submission a client waits for the answer: two attempts, a second apart at most, not a reconcile's
 * four (each attempt still ends after the executor's requestTimeoutMs).
 */
export const CLAIM_CHECK_RETRY: RetryPolicy = { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 1_000 };

const STORE =
  "no claim and the job's own checkpoint store (checkpoint.uri, --checkpoint, e.g. s3://bucket/run)";
const INSTEAD = `use a ReadWriteMany claim, such as one of an EFS storage class (efs.csi.aws.com), or ${STORE}`;

/**
 * Whether a job's pods can mount the claim: it must exist in the jobs namespace, be ReadWriteMany and
 * be Bound. boa pins each replica to the node it picked (spec.nodeName), so the scheduler never sees the
 * pod: a WaitForFirstConsumer claim (EKS's gp2, boa's own boa-gp3) never binds
 * (kubernetes/kubernetes#89953), an EBS volume cannot attach in another zone, and a ReadWriteOnce volume
 * is refused to every node but one (Multi-Attach). Each waits in ContainerCreating until the start
 * deadline, its GPUs paid and idle.
 */
export async function checkVolumeClaim(
  api: CoreV1Api,
  namespace: string,
  claim: string,
  retry: RetryContext,
): Promise<{ message: string; unavailable?: true } | undefined> {
  let pvc: V1PersistentVolumeClaim;
  try {
    pvc = await withKubeRetry(
      `read volume claim ${namespace}/${claim}`,
      () => api.readNamespacedPersistentVolumeClaim({ name: claim, namespace }),
      { ...retry, policy: CLAIM_CHECK_RETRY },
    );
  } catch (error) {
    const kind = kindOf(error);
    if (kind === 'not-found')
      return {
        message: `volume claim "${claim}" not found in namespace ${namespace} (the jobs' namespace): create it there first, or ${INSTEAD}`,
      };
    retry.logger.warn(
      { event: 'kube.claim.unreadable', claim, namespace, kind, err: error },
      'volume claim not read',
    );
    const why =
      kind === 'forbidden'
        ? `boa's role in ${namespace} needs get on persistentvolumeclaims (infra/k8s/jobs-rbac.ts)`
        : briefly(error);
    return { unavailable: true, message: `could not read volume claim "${claim}": ${why}` };
  }
  const modes = pvc.spec?.accessModes ?? [];
  if (!modes.includes('ReadWriteMany'))
    return {
      message:
        `volume claim "${claim}" is ${modes.join(', ') || 'without access modes'}, not ReadWriteMany: ` +
        'replicas run on nodes boa picks itself (bound by spec.nodeName, bypassing the scheduler), across ' +
        'zones and several nodes at once, where such a volume never binds (WaitForFirstConsumer), ' +
        `cannot attach (another zone) or is refused to a second node (Multi-Attach); ${INSTEAD}`,
    };
  // Pending: boa's pods never make a WaitForFirstConsumer claim bind, while one that binds at once (EFS)
  // is Bound seconds after its creation. Lost: its volume is gone.
  const phase = pvc.status?.phase;
  if (phase === 'Bound') return undefined;
  return {
    message:
      `volume claim "${claim}" is ${phase ?? 'not bound'}, not Bound: pods boa pins to their nodes never ` +
      'make a claim bind that waits for its first consumer (WaitForFirstConsumer); use a ReadWriteMany ' +
      `claim that is Bound (kubectl -n ${namespace} get pvc ${claim}), such as one of an EFS storage ` +
      `class (efs.csi.aws.com), or ${STORE}`,
  };
}

/** What the API server answered (its Status message), or the network error, without the headers. */
function briefly(error: unknown): string {
  const cause = error instanceof KubeCallError ? error.cause : error;
  const attempts = error instanceof KubeCallError ? ` (${error.attempts} attempts)` : '';
  if (cause instanceof ApiException) {
    let message: unknown;
    try {
      message = (JSON.parse(String(cause.body)) as { message?: unknown }).message;
    } catch {
      message = undefined;
    }
    return `the Kubernetes API server answered ${cause.code}${typeof message === 'string' ? `: ${message}` : ''}${attempts}`;
  }
  return `${cause instanceof Error ? cause.message : String(cause)}${attempts}`;
}
