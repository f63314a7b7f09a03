import type { CoreV1Api, KubeConfig, StorageV1Api, V1Pod, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type {
  DesiredJob,
  Executor,
  ReplicaLog,
  ReplicaLogFollow,
  ReplicaLogQuery,
  ReplicaStatus,
  Workload,
} from '../../service/ports.ts';
import type { RetryContext, RetryPolicy } from '../retry.ts';
import { realSleep, type Sleep } from '../time.ts';
import { ObjectCache } from './cache.ts';
import { coordinationApi, coreApi, networkingApi, storageApi, watcher } from './client.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import {
  identityOf,
  jobIdOf,
  OWNED_SELECTOR,
  podName,
  type PodIdentity,
  rank0Address,
  serviceName,
} from './names.ts';
import { JobNetworkPolicies } from './network-policy.ts';
import { checkPodWorkload, replicaStatusOf } from './pods.ts';
import { Readmissions } from './readmit.ts';
import { CreateErrorWaits } from './create-errors.ts';
import { PullErrors } from './pull-errors.ts';
import { LostContainers } from './lost-containers.ts';
import type { PodLogArchive } from './log-archive.ts';
import { PodStops } from './pod-stops.ts';
import type { ReplicaLogs } from './replica-logs.ts';
import { runLimited } from './run-limited.ts';
import { KUBE_RETRY, kindOf } from './retry.ts';
import { ensureTokenSecret } from './secrets.ts';
import { VanishedPods } from './vanished.ts';
import { StuckPods } from './stuck-pods.ts';
import { CreateRefusals } from './create-refusals.ts';
import { checkVolumeClaim as claimProblem } from './claims.ts';
import { ClaimRechecks } from './claim-recheck.ts';
import { ServiceWrites } from './service-writes.ts';
import { belongs, keptEnded } from './pod-keep.ts';
import { podLogs } from './pod-logs.ts';
import { PodWrites } from './pod-writes.ts';
import { NamespaceClaim } from './namespace-claim.ts';
import { waitingForOlderPods } from './older-pods-wait.ts';
import { heldForNodes, ListedNodes } from './listed-nodes.ts';

export interface KubernetesExecutorDeps {
  readonly kubeConfig: KubeConfig;
  /** This boa's id (service/instance-id.ts): what its claim on the jobs namespace names (namespace-claim.ts). */
  readonly instanceId: string;
  readonly logger: Logger;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  /** Kubernetes calls: fewer and quicker than AWS's, since a tick waits for them. */
  readonly retryPolicy?: RetryPolicy;
  readonly now?: () => number;
  /** Where pods' logs are kept as boa deletes the pods (`<data>/jobs`); none kept without it. */
  readonly logArchiveDir?: string;
}

/**
 * The Executor port on Kubernetes: one pod per replica, pinned to its node, owned by the job's headless
 * Service, as are the Secret holding the job's token and the NetworkPolicy admitting only the job's own
 * pods. Level-triggered: every reconcile compares the pods boa owns (by label, from a watch-backed cache
 * with periodic relist) with the desired replicas and fixes the difference. Pod names are deterministic
 * (job, generation, rank), so a create repeated after a crash or a lost answer is refused with
 * AlreadyExists and the pod adopted, never started twice.
 */
export class KubernetesExecutor implements Executor {
  readonly kind = 'kubernetes' as const;
  private readonly api: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly policies: JobNetworkPolicies;
  private readonly pods: ObjectCache<V1Pod>;
  private readonly services: ObjectCache<V1Service>;
  private readonly retry: RetryContext;
  private readonly logger: Logger;
  /** Replicas whose pod create was refused, and jobs whose creates failed for no fault of theirs. */
  private readonly refusals: CreateRefusals;
  private readonly readmissions = new Readmissions();
  /** Pods in a create error the kubelet retries (create-errors.ts): failed only once it has lasted. */
  private readonly createErrors = new CreateErrorWaits();
  /** Each pod's last ErrImagePull, which its ImagePullBackOff no longer names. */
  private readonly pullErrors = new PullErrors();
  /** When each pod's container started, for one its node then lost (lost-containers.ts). */
  private readonly lostContainers = new LostContainers();
  /** Replicas whose pod someone else deleted: reported interrupted, not created again (vanished.ts). */
  private readonly vanished: VanishedPods;
  private readonly now: () => number;
  private readonly archive: PodLogArchive;
  private readonly replicaLogs: ReplicaLogs;
  /** What each pass stops, and ranks that finished on their own until a pass has reported them. */
  private readonly stops: PodStops;
  /** Checkpoint claims read again while pods wait on them: one gone fails its pods at once. */
  private readonly claims: ClaimRechecks;
  /** Pods stuck Terminating on a node gone or not Ready: force-deleted (stuck-pods.ts). */
  private readonly stuck: StuckPods;
  private readonly podWrites: PodWrites;
  private readonly serviceWrites: ServiceWrites;
  /** The jobs namespace is this boa's alone: nothing is created or deleted there without it. */
  private readonly namespaceClaim: NamespaceClaim;
  /** No pod is made on a node the cluster does not list (listed-nodes.ts). */
  private readonly nodes: ListedNodes;

  constructor(
    private readonly config: KubernetesExecutorConfig,
    deps: KubernetesExecutorDeps,
  ) {
    this.logger = deps.logger;
    this.now = deps.now ?? Date.now;
    // Its pods' last versions as a pass would report them: a lost container is no fault of the job.
    this.vanished = new VanishedPods(deps.logger, this.now, (pod) => {
      const status = replicaStatusOf(pod);
      return status && this.lostContainers.status(pod, status, this.now());
    });
    this.refusals = new CreateRefusals(this.logger);
    this.api = coreApi(deps.kubeConfig, config.requestTimeoutMs);
    this.storage = storageApi(deps.kubeConfig, config.requestTimeoutMs);
    this.retry = {
      sleep: deps.sleep ?? realSleep,
      random: deps.random ?? Math.random,
      logger: deps.logger,
      policy: deps.retryPolicy ?? KUBE_RETRY,
    };
    const common = {
      namespace: config.namespace,
      labelSelector: OWNED_SELECTOR,
      watch: watcher(deps.kubeConfig, config.requestTimeoutMs),
      retry: this.retry,
      logger: deps.logger,
      resyncMs: config.resyncSeconds * 1000,
      now: deps.now ?? Date.now,
    };
    const namespace = config.namespace;
    const reads = { api: this.api, namespace, retry: this.retry, logger: deps.logger, now: this.now };
    this.claims = new ClaimRechecks(reads);
    this.stuck = new StuckPods(reads);
    const logs = podLogs(config, { ...deps, api: this.api, retry: this.retry }, () => this.pods.current());
    this.archive = logs.archive;
    this.replicaLogs = logs.replicaLogs;
    this.stops = new PodStops(this.archive, {
      belongs,
      kept: (pod) => keptEnded(pod, this.now, this.config.endedPodRetentionSeconds),
      deletePod: (pod) => this.podWrites.delete(pod),
    });
    this.pods = new ObjectCache<V1Pod>({
      ...common,
      resource: 'pods',
      list: () => this.api.listNamespacedPod({ namespace, labelSelector: OWNED_SELECTOR }),
      seen: (pod) => {
        this.pullErrors.seen(pod);
        this.lostContainers.seen(pod);
        this.vanished.versionSeen(pod);
      },
    });
    this.services = new ObjectCache<V1Service>({
      ...common,
      resource: 'services',
      list: () => this.api.listNamespacedService({ namespace, labelSelector: OWNED_SELECTOR }),
    });
    const writes = { api: this.api, config, retry: this.retry, logger: deps.logger };
    this.podWrites = new PodWrites({
      ...writes,
      pods: this.pods,
      refusals: this.refusals,
      vanished: this.vanished,
    });
    this.serviceWrites = new ServiceWrites({
      ...writes,
      services: this.services,
      // A Service gone that the cache still had: its pods' and policies' deletions went unheard too.
      relist: () => [this.pods, this.services, this.policies.cache].forEach((c) => c.invalidate()),
    });
    const coordination = coordinationApi(deps.kubeConfig, config.requestTimeoutMs);
    this.namespaceClaim = new NamespaceClaim(
      coordination,
      namespace,
      deps.instanceId,
      this.retry,
      deps.logger,
      this.now,
    );
    const networking = networkingApi(deps.kubeConfig, config.requestTimeoutMs);
    this.policies = new JobNetworkPolicies(networking, config, this.retry, deps.logger, common);
    this.nodes = new ListedNodes({
      ...common,
      api: this.api,
      kubeConfig: deps.kubeConfig,
      requestTimeoutMs: config.requestTimeoutMs,
    });
  }

  checkWorkload(workload: Workload) {
    return checkPodWorkload(workload);
  }

  checkVolumeClaim(claim: string) {
    return claimProblem({ core: this.api, storage: this.storage }, this.config.namespace, claim, this.retry);
  }

  rendezvous(jobId: number): { addr: string; port: number } {
    return { addr: rank0Address(jobId, this.config.namespace), port: this.config.rendezvousPort };
  }

  logs(query: ReplicaLogQuery): Promise<ReplicaLog | undefined> {
    return this.replicaLogs.read(query);
  }

  followLog(query: ReplicaLogQuery, signal: AbortSignal): Promise<ReplicaLogFollow | undefined> {
    return this.replicaLogs.follow(query, signal);
  }

  keptLogJobs(): number[] {
    return this.archive.jobs();
  }

  deleteKeptLogs(jobId: number): boolean {
    return this.archive.delete(jobId);
  }

  outage(): ReadonlySet<number> {
    return this.refusals.outage;
  }

  /**
   * Throws NamespaceClaimedError, before any step, while another boa holds the jobs namespace: what
   * this boa's selector finds there may be that boa's, and deleting it would stop its jobs.
   */
  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    // The claim beside the caches' reads, which change nothing: every write comes after both.
    const [pods, services] = await Promise.all([
      this.pods.current(),
      this.services.current(),
      this.policies.cache.current(),
      this.namespaceClaim.hold(),
    ]);
    const want = new Map(desired.map((job) => [job.jobId, job]));
    this.refusals.beginPass();
    const byJob = new Map<number, { pod: V1Pod; id: PodIdentity }[]>();
    for (const pod of pods) {
      const id = identityOf(pod.metadata?.labels);
      if (!id) continue;
      byJob.set(id.jobId, [...(byJob.get(id.jobId) ?? []), { pod, id }]);
    }
    // Stop what should not run: other generations, jobs no longer desired, replicas on the wrong node.
    // One that had ended on its own is reported as it ended, once more: its pod may be gone by the end
    // of this pass (a rank 0 that finished just as its job was rescaled is the job finished).
    const { tasks, endedBeforeDeletion, finishedNow } = this.stops.plan(byJob, want);
    // Pods their node turned away (another job's pod still holding the GPUs) go, to be created again.
    const wanted = [...byJob].flatMap(([jobId, owned]) =>
      owned.filter(({ pod, id }) => belongs(pod, id, want.get(jobId))).map(({ pod }) => pod),
    );
    for (const pod of this.readmissions.toRemove(pods, wanted, this.now())) {
      this.logger.info(
        {
          event: 'kube.pod.readmit',
          pod: pod.metadata?.name,
          node: pod.spec?.nodeName,
          reason: pod.status?.message,
        },
        'replica pod turned away by its node; creating it again',
      );
      tasks.push(() => this.podWrites.delete(pod));
    }
    this.vanished.note(wanted, want);
    // Start what is missing, once the job's older replicas are gone.
    const servicesByName = new Map(services.map((s) => [s.metadata?.name ?? '', s]));
    const waiting: ReplicaStatus[] = [];
    // Read once a pass, and only by a pass that has pods to make.
    let listedNodes: Promise<ReadonlySet<string>> | undefined;
    for (const job of desired) {
      const owned = byJob.get(job.jobId) ?? [];
      const older = owned.filter(({ pod, id }) => !belongs(pod, id, job)).map(({ pod }) => pod);
      if (older.length > 0) {
        waiting.push(...waitingForOlderPods(job, owned, older, this.now()));
        continue;
      }
      const missing = job.replicas.filter((r) => {
        const name = podName(job.jobId, job.generation, r.rank);
        return (
          !owned.some(({ id }) => id.rank === r.rank) &&
          !this.refusals.blocks(name) &&
          !this.vanished.has(name)
        );
      });
      if (missing.length === 0) {
        // Running without its policy: deleted by hand, or made before boa made policies (an upgrade).
        const service = servicesByName.get(serviceName(job.jobId));
        const live = service?.metadata?.uid && !service.metadata.deletionTimestamp;
        if (owned.length > 0 && live && !this.policies.present(job.jobId, service))
          tasks.push(async () => void (await this.policies.ensure(job.jobId, service)));
        continue;
      }
      tasks.push(async () => {
        let service: V1Service | undefined;
        let refused: string | undefined;
        try {
          const held = heldForNodes(missing, await (listedNodes ??= this.nodes.names()));
          if (held.length > 0) return void waiting.push(...held);
          const ensured = await this.serviceWrites.ensure(
            job.jobId,
            servicesByName.get(serviceName(job.jobId)),
          );
          // Before any pod: without its NetworkPolicy the namespace's policy lets no peer in, and without
          // its Secret a pod fails (CreateContainerConfigError). One the API server refuses (the Service
          // too) fails the replicas, as a refused pod does.
          const { api, config, retry, logger } = this;
          if (typeof ensured === 'string') refused = ensured;
          else
            refused =
              (await this.policies.ensure(job.jobId, (service = ensured))) ??
              (await ensureTokenSecret(api, config, retry, logger, missing[0]!, service));
        } catch (error) {
          // An API server down or throttling past the retries (the nodes' list too) is not the job's fault:
          // its start deadline restarts, as for a pod write's (found in review: it ran on, and failed the
          // job's generation).
          this.refusals.stepFailed(job.jobId, kindOf(error));
          throw error;
        }
        if (refused !== undefined)
          return missing.forEach((replica) => this.refusals.reject(replica, refused));
        for (const replica of missing) await this.podWrites.create(replica, service!);
      });
    }
    // A job that is gone and whose pods are gone loses its Service (anything left is collected with it).
    for (const service of services) {
      // Only a job's Service: another object labelled managed-by=boa (a dashboard's, say) has no job id.
      const jobId = jobIdOf(service.metadata?.labels);
      if (jobId === undefined) continue;
      if (!want.has(jobId) && !byJob.has(jobId) && !service.metadata?.deletionTimestamp) {
        tasks.push(() => this.serviceWrites.delete(service));
      }
    }

    // Never throws: a claim not read fails nothing.
    tasks.push(...this.claims.due(wanted));
    // A stop no kubelet will confirm: the job's next generation waits for it.
    tasks.push(...this.stuck.due(pods));
    const errors = await runLimited(tasks, this.config.concurrency);
    for (const error of errors) {
      this.logger.error(
        { event: 'kube.reconcile.failed', error: String(error) },
        'reconcile step failed; retried next tick',
      );
    }
    this.refusals.prune(want, (name) => this.pods.get(name) !== undefined);
    // A pod this pass saw ended before deleting it is reported as it was seen: the delete's answer,
    // stamped to the second like its exit, cannot tell that exit from one the deletion caused.
    const seenEnded = new Map(endedBeforeDeletion.map((r) => [`${r.jobId}/${r.generation}/${r.rank}`, r]));
    const snapshot = this.pods.snapshot();
    const now = this.now();
    this.createErrors.note(snapshot, now);
    this.pullErrors.note(snapshot);
    this.lostContainers.note(snapshot);
    this.vanished.settle(snapshot, want);
    const statuses = snapshot.flatMap((pod) => {
      const status = replicaStatusOf(pod);
      if (!status) return [];
      const key = `${status.jobId}/${status.generation}/${status.rank}`;
      const ended = seenEnded.get(key);
      seenEnded.delete(key);
      const lost = this.lostContainers.status(pod, status, now);
      const waited = this.createErrors.status(pod, this.pullErrors.status(pod, lost), now);
      return [ended ?? this.claims.status(pod, this.readmissions.status(pod, waited))];
    });
    this.stops.reported(finishedNow);
    const reported = [
      ...statuses,
      ...seenEnded.values(),
      ...this.refusals.statuses(),
      ...this.vanished.statuses(),
    ];
    // Only for replicas nothing else reports (a refusal or a vanished pod says more).
    const keys = new Set(reported.map((r) => `${r.jobId}/${r.generation}/${r.rank}`));
    return [...reported, ...waiting.filter((r) => !keys.has(`${r.jobId}/${r.generation}/${r.rank}`))];
  }

  async close(): Promise<void> {
    this.pods.close();
    this.services.close();
    this.nodes.close();
    this.policies.close();
    // What stopping pods wrote so far is kept; a restarted boa follows those still stopping again.
    await this.archive.close();
  }
}
