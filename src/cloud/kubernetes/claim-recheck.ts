import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReplicaStatus } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { CLAIM_CHECK_RETRY } from './claims.ts';
import { kindOf, withKubeRetry } from './retry.ts';
import { waitingOnClaims } from './volume-wait.ts';

/** A claim its pods wait on is read at most this often, whatever the number of pods or passes. */
export const CLAIM_RECHECK_MS = 30_000;

interface Reading {
  readonly at: number;
  /** Why no pod can mount it, when the last read found it so. */
  readonly gone?: string;
  /** The kind of the last failed read, so a failure is logged once, not every read. */
  readonly failed?: string;
}

/**
 * Checkpoint claims deleted (or turned Lost) after their job was submitted: claims.ts checks a claim
 * once, at submission. A pod pinned by spec.nodeName whose claim is gone waits in ContainerCreating
 * (the kubelet cannot mount it), its GPUs paid, until the start deadline; boa cannot read the kubelet's
 * FailedMount Event (its role grants no Events). So while a pod waits there on a claim, the claim is
 * read again, once per CLAIM_RECHECK_MS for all its pods, and a pod whose claim is missing, Lost or
 * being deleted (the kubelet mounts no such claim; pvc-protection keeps it until no pod uses it) is
 * reported failed, not restartable: no restart can mount it. A read that fails (a 403 from a role without
 * get on persistentvolumeclaims, an API server out) fails nothing: the start deadline stays.
 */
/** What the job's reason ends with (ReplicaStatus.notRestartable): its own words say what to do. */
export const NOT_RESTARTED = 'not restarted: a restart would fail the same way';

export class ClaimRechecks {
  private readonly readings = new Map<string, Reading>();

  constructor(
    private readonly deps: {
      readonly api: CoreV1Api;
      readonly namespace: string;
      readonly retry: RetryContext;
      readonly logger: Logger;
      readonly now: () => number;
    },
  ) {}

  /** The reads this pass is to make: claims waited on and not read within CLAIM_RECHECK_MS. */
  due(pods: readonly V1Pod[]): Array<() => Promise<void>> {
    const now = this.deps.now();
    const fresh = (claim: string) => {
      const at = this.readings.get(claim)?.at;
      return at !== undefined && now - at < CLAIM_RECHECK_MS && now >= at;
    };
    const waited = new Set(pods.flatMap((pod) => waitingOnClaims(pod)));
    for (const claim of this.readings.keys())
      if (!waited.has(claim) && !fresh(claim)) this.readings.delete(claim);
    return [...waited]
      .filter((claim) => !fresh(claim))
      .map((claim) => {
        // Taken now, so a read in flight or failed still counts against the interval.
        this.readings.set(claim, { ...this.readings.get(claim), at: now });
        return () => this.read(claim, now);
      });
  }

  /** The pod's status, failed for good when it waits on a claim the last read found gone. */
  status(pod: V1Pod, status: ReplicaStatus): ReplicaStatus {
    if (status.phase !== 'starting') return status;
    for (const claim of waitingOnClaims(pod)) {
      const gone = this.readings.get(claim)?.gone;
      if (gone) {
        const reason = `ContainerCreating: ${gone}`;
        return { ...status, phase: 'failed', reason, notRestartable: NOT_RESTARTED };
      }
    }
    return status;
  }

  private async read(claim: string, at: number): Promise<void> {
    const { api, namespace, retry, logger } = this.deps;
    const instead =
      `its job's pods cannot mount it and would wait in ContainerCreating until startTimeoutSeconds; make a ` +
      `ReadWriteMany claim of that name again and submit the job again, or submit with checkpoint.uri (--checkpoint)`;
    let gone: string | undefined;
    try {
      const pvc = await withKubeRetry(
        `read volume claim ${namespace}/${claim}`,
        () => api.readNamespacedPersistentVolumeClaim({ name: claim, namespace }),
        { ...retry, policy: CLAIM_CHECK_RETRY },
      );
      if (pvc.metadata?.deletionTimestamp)
        gone = `volume claim "${claim}" is being deleted (since ${new Date(pvc.metadata.deletionTimestamp).toISOString()}): ${instead}`;
      else if (pvc.status?.phase === 'Lost')
        gone = `volume claim "${claim}" is Lost (its volume is gone): ${instead}`;
    } catch (error) {
      const kind = kindOf(error);
      if (kind === 'not-found') {
        gone = `volume claim "${claim}" no longer exists in namespace ${namespace} (deleted after the job was submitted): ${instead}`;
      } else {
        if (this.readings.get(claim)?.failed !== kind)
          logger.warn(
            { event: 'kube.claim.recheck-failed', claim, namespace, kind, err: error },
            kind === 'forbidden'
              ? 'volume claim not read again: boa needs get on persistentvolumeclaims (redeploy the stack); its pods fail only at the start deadline'
              : 'volume claim not read again; its pods fail only at the start deadline',
          );
        // Unknown now: what an older read found is not held against the pods.
        this.readings.set(claim, { at, failed: kind });
        return;
      }
    }
    if (gone && !this.readings.get(claim)?.gone)
      logger.error(
        { event: 'kube.claim.gone', claim, namespace, reason: gone },
        'checkpoint volume claim gone',
      );
    this.readings.set(claim, { at, ...(gone ? { gone } : {}) });
  }
}
