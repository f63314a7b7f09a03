import {
  ApiException,
  type CoreV1Api,
  type StorageV1Api,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import type { VolumeClaimProblem } from '../../service/ports.ts';
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
 * deadline, its GPUs paid and idle. A Pending claim that binds by itself (an Immediate class whose
 * provisioner is still at work: dynamic EFS takes seconds) is `binding`, to be asked again shortly,
 * not refused: only its class tells the two apart, so it is read then.
 */
export async function checkVolumeClaim(
  apis: { core: CoreV1Api; storage: StorageV1Api },
  namespace: string,
  claim: string,
  retry: RetryContext,
): Promise<VolumeClaimProblem | undefined> {
  let pvc: V1PersistentVolumeClaim;
  try {
    pvc = await withKubeRetry(
      `read volume claim ${namespace}/${claim}`,
      () => apis.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace }),
      { ...retry, policy: CLAIM_CHECK_RETRY },
    );
  } catch (error) {
    const kind = kindOf(error);
    if (kind === 'not-found')
      return {
        kind: 'refused',
        message: `volume claim "${claim}" not found in namespace ${namespace} (the jobs' namespace): create it there first, or ${INSTEAD}`,
      };
    retry.logger.warn(
      { event: 'kube.claim.unreadable', claim, namespace, kind, err: error },
      'volume claim not read',
    );
    // boa's own role lacks the rule (a stack deployed before it was added): no retry fixes that.
    if (refused(error))
      return {
        kind: 'forbidden',
        message:
          `boa may not read volume claim "${claim}" (${briefly(error)}): its role in ${namespace} needs get on ` +
          `persistentvolumeclaims, which the CDK app grants (infra/k8s/jobs-rbac.ts, since 2026-12-01): ` +
          'redeploy the stack (cdk deploy), or submit with checkpoint.uri (--checkpoint) instead',
      };
    return { kind: 'unavailable', message: `could not read volume claim "${claim}": ${briefly(error)}` };
  }
  const modes = pvc.spec?.accessModes ?? [];
  if (!modes.includes('ReadWriteMany'))
    return {
      kind: 'refused',
      message:
        `volume claim "${claim}" is ${modes.join(', ') || 'without access modes'}, not ReadWriteMany: ` +
        'replicas run on nodes boa picks itself (bound by spec.nodeName, bypassing the scheduler), across ' +
        'zones and several nodes at once, where such a volume never binds (WaitForFirstConsumer), ' +
        `cannot attach (another zone) or is refused to a second node (Multi-Attach); ${INSTEAD}`,
    };
  // The API server makes a new claim Pending: a missing phase is one (the fake stores claims as given).
  const phase = pvc.status?.phase ?? 'Pending';
  if (phase === 'Bound') return undefined;
  if (phase === 'Pending') return pendingProblem(apis.storage, namespace, claim, pvc, retry);
  return {
    kind: 'refused',
    message:
      `volume claim "${claim}" is ${phase}, not Bound: its volume is gone (kubectl -n ${namespace} ` +
      `describe pvc ${claim}); make a new ReadWriteMany claim, or ${STORE}`,
  };
}

/**
 * A ReadWriteMany claim still Pending: refused if its class waits for a scheduled consumer, which boa's
 * pods never are; otherwise (Immediate, no class: static binding to a PersistentVolume, bound ahead to
 * a volume, or a class boa could not read) it may bind by itself, and the client is told to ask again.
 */
async function pendingProblem(
  storage: StorageV1Api,
  namespace: string,
  claim: string,
  pvc: V1PersistentVolumeClaim,
  retry: RetryContext,
): Promise<VolumeClaimProblem> {
  const check = `kubectl -n ${namespace} get pvc ${claim}`;
  const again = `try again shortly, once \`${check}\` shows it Bound`;
  const binding = (why: string): VolumeClaimProblem => ({
    kind: 'binding',
    message: `volume claim "${claim}" is Pending, not Bound yet: ${why}; ${again}`,
  });
  // Bound ahead to a named volume, a claim binds to it whatever its class's binding mode.
  if (pvc.spec?.volumeName)
    return binding(`it names volume ${pvc.spec.volumeName}, and binds once that volume is Available`);
  // The class is set when the claim is made (the default one, by the admission plugin, when it names
  // none); the beta annotation is the field's older spelling. None, or "": a PersistentVolume made by
  // hand binds it.
  const className =
    pvc.spec?.storageClassName ?? pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
  if (!className)
    return binding(
      'it has no storage class, so it binds to a matching PersistentVolume once there is one (or takes ' +
        "the cluster's default class, once one is set)",
    );
  let mode: string;
  try {
    const sc = await withKubeRetry(
      `read storage class ${className}`,
      () => storage.readStorageClass({ name: className }),
      { ...retry, policy: CLAIM_CHECK_RETRY },
    );
    // The API server defaults an unset mode to Immediate.
    mode = sc.volumeBindingMode ?? 'Immediate';
  } catch (error) {
    const kind = kindOf(error);
    retry.logger.warn(
      { event: 'kube.storage-class.unreadable', storageClass: className, claim, kind, err: error },
      'storage class not read',
    );
    // Unknown, the class decides nothing: the claim may still bind, so it is not refused on that alone.
    const why =
      kind === 'not-found'
        ? 'it does not exist'
        : refused(error)
          ? "boa's role needs get on storageclasses (cluster-wide), which the CDK app grants since " +
            '2026-12-01: redeploy the stack (cdk deploy)'
          : briefly(error);
    return binding(
      `its storage class "${className}" could not be read (${why}), so boa cannot tell whether it binds by ` +
        "itself (Immediate) or only for a scheduled pod (WaitForFirstConsumer: never, for boa's pods)",
    );
  }
  if (mode === 'WaitForFirstConsumer')
    return {
      kind: 'refused',
      message:
        `volume claim "${claim}" is Pending, and its storage class "${className}" binds it only when a pod ` +
        'using it is scheduled (volumeBindingMode WaitForFirstConsumer): boa pins its pods to nodes ' +
        '(spec.nodeName), bypassing the scheduler, so it would never bind; use a ReadWriteMany claim of a ' +
        `class with volumeBindingMode Immediate, such as EFS (efs.csi.aws.com), or ${STORE}`,
    };
  return binding(
    `its storage class "${className}" binds at once (volumeBindingMode ${mode}), so its volume is most ` +
      'likely still being made (an EFS access point takes seconds)',
  );
}

/** An HTTP 403: boa's own permissions (RBAC), whichever way the retry layer classified it. */
function refused(error: unknown): boolean {
  const cause = error instanceof KubeCallError ? error.cause : error;
  return cause instanceof ApiException && cause.code === 403;
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
