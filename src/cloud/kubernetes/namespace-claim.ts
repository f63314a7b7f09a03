import { type CoordinationV1Api, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import { CLAIM_LEASE_NAME, LABELS, MANAGED_BY } from './names.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/**
 * How long a claim holds without renewal: another boa takes the namespace over only after this. Long
 * (a boa restarting, or cut off from the API server for minutes, keeps its namespace), and far above the
 * renewal interval, so clocks a few minutes apart do not matter.
 */
export const CLAIM_LEASE_SECONDS = 900;

/** A claim held is renewed by the first pass after this long: about one write a minute. */
export const CLAIM_RENEW_SECONDS = 60;

/** Another boa holds the jobs namespace: this one does nothing there. */
export class NamespaceClaimedError extends Error {
  override name = 'NamespaceClaimedError';
}

/** The jobs namespace does not exist, or is being deleted: nothing of boa's can be made there. */
export class JobsNamespaceError extends Error {
  override name = 'JobsNamespaceError';
}

type Decision = { readonly held: true } | { readonly held: false; readonly lease: V1Lease };

const seconds = (ms: number) => Math.round(ms / 1000);

/**
 * boa's claim on its jobs namespace, as Kubernetes controllers claim what they run: the Lease `boa-owner`
 * whose holderIdentity is this boa's instance id (kept in its data dir). The executor finds its objects
 * by label alone and deletes those it has no job for, so two boas on one namespace would delete each
 * other's pods; with the claim, only its holder touches the namespace. Level-triggered: `hold()` reads
 * the Lease on every pass and nothing is remembered between passes.
 */
export class NamespaceClaim {
  constructor(
    private readonly api: CoordinationV1Api,
    private readonly namespace: string,
    private readonly instanceId: string,
    private readonly retry: RetryContext,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * Resolves once this boa holds the claim (made, renewed when due, or taken over from a holder whose
   * renewal lapsed); throws NamespaceClaimedError while another boa's is live. Writes carry the
   * resourceVersion read, so of two boas racing for one Lease only one writes: the other's 409 Conflict is
   * retried by the retry layer, which reads the Lease again and finds the winner.
   */
  async hold(): Promise<void> {
    let decision: Decision;
    try {
      decision = await withKubeRetry('claim jobs namespace', () => this.attempt(), this.retry);
    } catch (error) {
      // Said plainly: the API server's answer, wrapped, read as a failed claim (found in review).
      if (kindOf(error) === 'namespace')
        throw new JobsNamespaceError(this.namespaceProblem(error), { cause: error });
      throw error;
    }
    if (!decision.held) throw new NamespaceClaimedError(this.refusal(decision.lease));
  }

  private async attempt(): Promise<Decision> {
    const lease = await this.read();
    if (lease) return this.decide(lease);
    try {
      await this.api.createNamespacedLease({ namespace: this.namespace, body: this.claim() });
    } catch (error) {
      if (kindOf(error) !== 'exists') throw error;
      // Another boa made it between the read and the create: whatever it says now decides.
      const made = await this.read();
      if (!made) throw error;
      return this.decide(made);
    }
    this.logger.info(
      { event: 'kube.namespace.claimed', namespace: this.namespace, holder: this.instanceId },
      `jobs namespace ${this.namespace} claimed by this boa (lease ${CLAIM_LEASE_NAME})`,
    );
    return { held: true };
  }

  private async decide(lease: V1Lease): Promise<Decision> {
    const holder = lease.spec?.holderIdentity;
    const sinceRenewal = this.sinceRenewal(lease);
    if (holder === this.instanceId) {
      if (sinceRenewal < CLAIM_RENEW_SECONDS * 1000) return { held: true };
      await this.write(lease, false);
      return { held: true };
    }
    if (holder && sinceRenewal < this.durationMs(lease)) return { held: false, lease };
    await this.write(lease, true);
    this.logger.warn(
      {
        event: 'kube.namespace.taken-over',
        namespace: this.namespace,
        holder: this.instanceId,
        previousHolder: holder ?? null,
        lastRenewed: this.renewedAt(lease)?.toISOString() ?? null,
      },
      `jobs namespace ${this.namespace}: the claim of boa ${holder ?? '(none)'} lapsed (last renewed ${this.renewedAt(lease)?.toISOString() ?? 'never'}); taken over by this boa`,
    );
    return { held: true };
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ name: CLAIM_LEASE_NAME, namespace: this.namespace });
    } catch (error) {
      if (kindOf(error) === 'not-found') return undefined;
      throw error;
    }
  }

  /** Renews (or takes over) the Lease read: a 409 if it changed since, retried from a fresh read. */
  private async write(lease: V1Lease, takeOver: boolean): Promise<void> {
    const claim = this.claim();
    const transitions = lease.spec?.leaseTransitions ?? 0;
    const body: V1Lease = {
      ...claim,
      metadata: { ...lease.metadata, ...claim.metadata, resourceVersion: lease.metadata?.resourceVersion },
      spec: takeOver
        ? { ...claim.spec, leaseTransitions: transitions + 1 }
        : { ...claim.spec, acquireTime: lease.spec?.acquireTime, leaseTransitions: transitions },
    };
    await this.api.replaceNamespacedLease({ name: CLAIM_LEASE_NAME, namespace: this.namespace, body });
  }

  /** The Lease as this boa holds it, renewed now. */
  private claim(): V1Lease {
    const now = new V1MicroTime(this.now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: CLAIM_LEASE_NAME,
        namespace: this.namespace,
        labels: { [LABELS.managedBy]: MANAGED_BY },
      },
      spec: {
        holderIdentity: this.instanceId,
        leaseDurationSeconds: CLAIM_LEASE_SECONDS,
        acquireTime: now,
        renewTime: now,
      },
    };
  }

  /** The client hands MicroTime back as the JSON string it read, or as a Date: either parses. */
  private renewedAt(lease: V1Lease): Date | undefined {
    const raw = lease.spec?.renewTime ?? lease.spec?.acquireTime;
    const at = raw === undefined ? NaN : new Date(raw as Date | string).getTime();
    return Number.isFinite(at) ? new Date(at) : undefined;
  }

  /** A Lease never renewed counts as lapsed. */
  private sinceRenewal(lease: V1Lease): number {
    const at = this.renewedAt(lease);
    return at === undefined ? Infinity : this.now() - at.getTime();
  }

  private durationMs(lease: V1Lease): number {
    const stated = lease.spec?.leaseDurationSeconds;
    return (stated !== undefined && stated > 0 ? stated : CLAIM_LEASE_SECONDS) * 1000;
  }

  private namespaceProblem(error: unknown): string {
    const ns = this.namespace;
    const terminating = /being terminated/.test(String((error as Error).message));
    return terminating
      ? `jobs namespace ${ns} is being deleted (kubectl delete namespace): boa makes nothing there until it is ` +
          `gone and made again (kubectl create namespace ${ns}, or cdk deploy, which makes it), or boa is given ` +
          `another namespace (kubernetes.namespace, BOA_JOBS_NAMESPACE)`
      : `jobs namespace ${ns} does not exist in the cluster: create it (kubectl create namespace ${ns}, or cdk ` +
          `deploy, which makes it: CDK context jobsNamespace, default boa-jobs), or give boa the one that exists ` +
          `(kubernetes.namespace, BOA_JOBS_NAMESPACE)`;
  }

  private refusal(lease: V1Lease): string {
    const ns = this.namespace;
    const holder = lease.spec?.holderIdentity;
    const renewed = this.renewedAt(lease)!;
    // A holder whose clock runs ahead renews "in the future": said so, not as a negative age.
    const sinceMs = this.now() - renewed.getTime();
    const ago =
      sinceMs < 0 ? `${seconds(-sinceMs)} s ahead of this boa's clock` : `${seconds(sinceMs)} s ago`;
    const lapses = seconds(this.durationMs(lease) - Math.max(0, sinceMs));
    return (
      `jobs namespace ${ns} belongs to another boa (instance ${holder}; this one is ${this.instanceId}): ` +
      `its claim, lease ${CLAIM_LEASE_NAME}, was last renewed at ${renewed.toISOString()} (${ago}), so this boa ` +
      `creates and deletes nothing there. Give this boa its own namespace (kubernetes.namespace, BOA_JOBS_NAMESPACE); ` +
      `if that boa is gone for good (or this boa's data dir, its instance-id file, is new), wait for its claim to lapse ` +
      `(in ${lapses} s) or delete it: kubectl -n ${ns} delete lease ${CLAIM_LEASE_NAME}`
    );
  }
}
