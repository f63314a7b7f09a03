import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaStatus } from '../../service/ports.ts';
import { CLAIM_CHECK_RETRY } from './claims.ts';
import { kindOf, withKubeRetry } from './retry.ts';
import type { NamespacedStepDeps } from './step-deps.ts';
import { waitingOnClaims } from './volume-wait.ts';

/** A claim its pods wait on is read at most this often, whatever the number of pods or passes. */
export const CLAIM_RECHECK_MS = 30_000;

interface Reading {
  readonly at: number;
  /** Why no pod can mount it, when the last read found it so. */
  readonly gone?: string;
  /** The kind of the last failed read, so a failure is logged once, not every read. */
  readonly failed?: string;
  /**
   * The pods (uids) waiting on it when it was read: a verdict of gone holds for them only. A pod made
   * since (a job submitted after the claim was made again, as the reason tells the user to) has the
   * claim read again first (found in review: the 30 s verdict failed such a job's pods for good).
   */
  readonly pods?: ReadonlySet<string>;
}

const uidOf = (pod: V1Pod) => pod.metadata?.uid ?? pod.metadata?.name ?? '';

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

  constructor(private readonly deps: NamespacedStepDeps) {}

  /** The reads this pass is to make: claims waited on and not read within CLAIM_RECHECK_MS. */
  due(pods: readonly V1Pod[]): Array<() => Promise<void>> {
    const now = this.deps.now();
    const waited = new Map<string, Set<string>>();
    for (const pod of pods)
      for (const claim of waitingOnClaims(pod)) {
        const uids = waited.get(claim) ?? new Set<string>();
        waited.set(claim, uids.add(uidOf(pod)));
      }
    const fresh = (claim: string) => {
      const reading = this.readings.get(claim);
      if (reading === undefined || !(now - reading.at < CLAIM_RECHECK_MS && now >= reading.at)) return false;
      // Found gone: a pod made since is judged by a read of its own.
      const since = [...(waited.get(claim) ?? [])].some((uid) => !reading.pods?.has(uid));
      return !(reading.gone && since);
    };
    for (const claim of this.readings.keys())
      if (!waited.has(claim) && !fresh(claim)) this.readings.delete(claim);
    return [...waited]
      .filter(([claim]) => !fresh(claim))
      .map(([claim, uids]) => {
        // Taken now, so a read in flight or failed still counts against the interval; a verdict of gone
        // is not held against the pods made since until the read says so again.
        const { gone: _, ...last } = this.readings.get(claim) ?? {};
        this.readings.set(claim, { ...last, at: now, pods: uids });
        return () => this.read(claim, now, uids);
      });
  }

  /** The pod's status, failed for good when it waits on a claim the last read found gone. */
  status(pod: V1Pod, status: ReplicaStatus): ReplicaStatus {
    if (status.phase !== 'starting') return status;
    for (const claim of waitingOnClaims(pod)) {
      const reading = this.readings.get(claim);
      const gone = reading?.pods?.has(uidOf(pod)) ? reading.gone : undefined;
      if (gone) {
        const reason = `ContainerCreating: ${gone}`;
        return { ...status, phase: 'failed', reason, notRestartable: NOT_RESTARTED };
      }
    }
    return status;
  }

  private async read(claim: string, at: number, pods: ReadonlySet<string>): Promise<void> {
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
        this.readings.set(claim, { at, failed: kind, pods });
        return;
      }
    }
    if (gone && !this.readings.get(claim)?.gone)
      logger.error(
        { event: 'kube.claim.gone', claim, namespace, reason: gone },
        'checkpoint volume claim gone',
      );
    this.readings.set(claim, { at, pods, ...(gone ? { gone } : {}) });
  }
}
