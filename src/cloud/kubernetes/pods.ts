import type { V1Pod, V1Service } from '@kubernetes/client-node';
import type { ReplicaPhase, ReplicaSpec, ReplicaStatus, Workload } from '../../service/ports.ts';
import { notRestartable } from '../command-exits.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import {
  identityOf,
  jobLabels,
  LABELS,
  MANAGED_BY,
  ownedByService,
  podHostname,
  podName,
  serviceName,
} from './names.ts';
import { gpuTolerations } from './gpu-taint.ts';
import { scaleQuantity } from './quantity.ts';
import { containerEnv, replicaEnv } from './secrets.ts';
import { transientCreateError } from './create-errors.ts';
import { volumeWait } from './volume-wait.ts';
import { oomAdvice } from './oom.ts';
import { disruptionOf, runUntilMarked } from './disruption.ts';
import { ownPressureEviction } from './pressure-eviction.ts';
import { silentNodeOf, silentNodeReason } from './silent-node.ts';

/** Where a checkpoint volume claim is mounted (BOA_CHECKPOINT_DIR). */
export const CHECKPOINT_MOUNT = '/checkpoint';
/** The replica's container, the pod's only one. */
export const CONTAINER = 'train';

/** Headless, and publishing not-ready pods, so rank 0 resolves while the job is still starting. */
export function serviceManifest(jobId: number, config: KubernetesExecutorConfig): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: serviceName(jobId), namespace: config.namespace, labels: jobLabels(jobId) },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { [LABELS.managedBy]: MANAGED_BY, [LABELS.jobId]: String(jobId) },
      ports: [{ name: 'rendezvous', port: config.rendezvousPort, targetPort: config.rendezvousPort }],
    },
  };
}

/**
 * One replica's pod: bound to its node (spec.nodeName, no scheduler), asking for exactly its GPUs,
 * never restarted by the kubelet (boa decides restarts), owned by the job's Service; its token is read
 * from the job's Secret (secrets.ts), never written in the spec.
 */
export function podManifest(
  replica: ReplicaSpec,
  owner: { uid: string },
  config: KubernetesExecutorConfig,
): V1Pod {
  const { jobId, generation, rank, gpus, workload } = replica;
  // Never passed on, also for a job stored before checkPodWorkload refused them.
  const env = Object.fromEntries(
    Object.entries(replicaEnv(replica)).filter(([name]) => !GPU_SELECTION_ENV.test(name)),
  );
  if (workload.checkpoint?.volumeClaim) env.BOA_CHECKPOINT_DIR = CHECKPOINT_MOUNT;
  const requests: Record<string, string> = { 'nvidia.com/gpu': String(gpus) };
  const limits: Record<string, string> = { 'nvidia.com/gpu': String(gpus) };
  if (workload.cpuPerGpu !== undefined) requests.cpu = `${Math.round(workload.cpuPerGpu * gpus * 1000)}m`;
  if (workload.memoryPerGpu !== undefined) {
    requests.memory = limits.memory = scaleQuantity(workload.memoryPerGpu, gpus);
  }
  const volumes: NonNullable<V1Pod['spec']>['volumes'] = [{ name: 'dshm', emptyDir: { medium: 'Memory' } }];
  const volumeMounts = [{ name: 'dshm', mountPath: '/dev/shm' }];
  if (workload.checkpoint?.volumeClaim) {
    volumes.push({
      name: 'checkpoint',
      persistentVolumeClaim: { claimName: workload.checkpoint.volumeClaim },
    });
    volumeMounts.push({ name: 'checkpoint', mountPath: CHECKPOINT_MOUNT });
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(jobId, generation, rank),
      namespace: config.namespace,
      labels: {
        ...jobLabels(jobId),
        [LABELS.generation]: String(generation),
        [LABELS.rank]: String(rank),
        [LABELS.network]: 'job',
      },
      ownerReferences: ownedByService(jobId, owner.uid),
    },
    spec: {
      nodeName: replica.node,
      hostname: podHostname(rank),
      subdomain: serviceName(jobId),
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: config.terminationGraceSeconds,
      // A job talks to boa, not to the Kubernetes API: the namespace's default token is not mounted
      // unless a service account was configured for jobs (then its token is what it is for).
      ...(config.serviceAccountName
        ? { serviceAccountName: config.serviceAccountName }
        : { automountServiceAccountToken: false }),
      ...(config.imagePullSecrets.length > 0
        ? { imagePullSecrets: config.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      // The GPU nodes' taint (gpu-taint.ts), tolerated in case the kubelet checks it (nodeName skips
      // the scheduler).
      tolerations: gpuTolerations(),
      volumes,
      containers: [
        {
          name: CONTAINER,
          image: workload.image,
          command: [...workload.command],
          ...(workload.args ? { args: [...workload.args] } : {}),
          ...(workload.workingDir ? { workingDir: workload.workingDir } : {}),
          env: containerEnv(jobId, owner.uid, env),
          ports: [{ name: 'rendezvous', containerPort: config.rendezvousPort }],
          resources: { requests, limits },
          volumeMounts,
          // Nothing a training job needs. NET_RAW (raw sockets: spoofed packets on the node's network)
          // is dropped, as the CIS Kubernetes Benchmark advises; the runtime's other default capabilities
          // stay (images that run as root chown and setuid); baseline Pod Security refuses any beyond them.
          securityContext: {
            allowPrivilegeEscalation: false,
            seccompProfile: { type: 'RuntimeDefault' },
            capabilities: { drop: ['NET_RAW'] },
          },
        },
      ],
    },
  };
}

/**
 * Waiting reasons that do not go away by waiting: the replica is reported failed so boa can react. But
 * a CreateContainerError of a loaded runtime, or a CreateContainerConfigError of a kubelet that has not
 * read the Services or the job's Secret yet, passes (create-errors.ts): starting, until it has lasted.
 */
const STUCK_REASONS = new Set([
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

/**
 * A failed pull is retried by the kubelet, and most failures pass (a registry's 429 or 5xx, a timeout,
 * ECR throttling): failing the generation on the first one killed its running ranks, and a registry out
 * for two minutes failed the job for good. Only a registry's answer that the image is not there or not
 * ours fails at once; any other pull that never succeeds is caught by the start deadline
 * (startTimeoutSeconds). The kubelet's ImagePullBackOff message names no cause.
 */
const PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff']);
const PULL_REFUSED =
  /not found|manifest unknown|pull access denied|unauthorized|repository does not exist|invalid reference format|forbidden/i;
/**
 * A layer's content missing, not the image: containerd's own store losing a blob mid-pull ("content
 * digest sha256:...: not found") or a registry or pull-through cache answering 404 for a blob its
 * manifest names ("content at https://...: not found"). A cache or registry hiccup, retried as any
 * passing pull failure; a wrong tag or name ("<ref>: not found", "manifest unknown") is still refused.
 */
const PULL_CONTENT_MISSING = /content (?:digest sha256:[0-9a-f]+|at \S+):? not found(?:: not found)?/gi;
export const pullRefused = (message: string) => PULL_REFUSED.test(message.replace(PULL_CONTENT_MISSING, ''));

/**
 * The exit status a shell would give the container's command: its own, or, for containerd's StartError
 * (exit 128: runc could not exec it), 127 for a program not on the image's PATH and 126 for one it may
 * not run. Any other start error (a mount, a cgroup) is left as it is: it may pass.
 */
function commandExitOf(terminated: { exitCode: number; reason?: string; message?: string }): number {
  if (terminated.reason !== 'StartError') return terminated.exitCode;
  if (/exec: "[^"]*": executable file not found/.test(terminated.message ?? '')) return 127;
  if (/exec: "[^"]*": permission denied/.test(terminated.message ?? '')) return 126;
  return terminated.exitCode;
}

/** What the kubelet said, its message after its reason word, within a length a job record shows. */
export function said(reason: string, message: string | undefined): string {
  const text = message ? `${reason}: ${message}` : reason;
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

/** What boa needs of a pod: identity from labels, phase and exit code from its status. */
export function replicaStatusOf(pod: V1Pod): ReplicaStatus | undefined {
  const id = identityOf(pod.metadata?.labels);
  if (!id) return undefined;
  const container = pod.status?.containerStatuses?.[0];
  const terminated = container?.state?.terminated;
  const waiting = container?.state?.waiting?.reason;
  const waitingMessage = container?.state?.waiting?.message;
  const base = { ...id, node: pod.spec?.nodeName ?? '' };
  // A pod being deleted: its deletionTimestamp is when its grace ends, SIGKILL at the latest.
  const deletion = pod.metadata?.deletionTimestamp;
  const killAt = deletion ? { killAt: new Date(deletion).getTime() } : {};
  const ranForMs =
    terminated?.startedAt && terminated.finishedAt
      ? new Date(terminated.finishedAt).getTime() - new Date(terminated.startedAt).getTime()
      : undefined;
  // Before a termination message (said() cuts at 400 characters), which an OOM kill rarely leaves. Not
  // for an exit 0: containerd says OOMKilled of a container one of whose child processes was killed.
  const withAdvice = (ended: { exitCode: number; reason?: string; message?: string }) =>
    ended.reason === 'OOMKilled' && ended.exitCode !== 0
      ? [oomAdvice(pod), ended.message].filter(Boolean).join('; ')
      : ended.message;
  const ended = (phase: ReplicaPhase, fallbackReason: string): ReplicaStatus => ({
    ...base,
    phase,
    ...(terminated ? { exitCode: terminated.exitCode } : {}),
    ...(ranForMs !== undefined && ranForMs >= 0 ? { ranForMs } : {}),
    ...(terminated?.finishedAt ? { endedAt: new Date(terminated.finishedAt).getTime() } : {}),
    reason: terminated?.reason
      ? said(terminated.reason, withAdvice(terminated))
      : (pod.status?.reason ?? fallbackReason),
  });
  const phase = pod.status?.phase;
  // Not started: the node's kubelet had no room yet (the executor creates it again once it may have).
  if (admissionRejected(pod)) {
    return {
      ...base,
      phase: 'starting',
      reason: `not admitted by its node yet: ${pod.status?.message ?? pod.status?.reason}`,
    };
  }
  if (phase === 'Succeeded' || phase === 'Failed') {
    // Deleted or evicted by someone else (a drain, a spot interruption, node pressure): a job that
    // checkpoints on SIGTERM exits 0 then, which is a stop, not the job finished. boa deletes only
    // replicas it no longer wants, whose exits it ignores. But not evicted for its own memory or disk use.
    const own = ownPressureEviction(pod);
    if (own) return { ...ended('failed', 'Evicted'), reason: said('Evicted', own) };
    const disruption = interruptionOf(pod);
    if (disruption) {
      const run = terminated ? undefined : runUntilMarked(pod, container?.state?.running?.startedAt);
      return {
        ...ended('failed', disruption),
        reason: disruption,
        interrupted: true,
        ...(run === undefined ? {} : { ranForMs: run }),
      };
    }
    if (phase === 'Succeeded') return ended('succeeded', 'Completed');
    // A container's exit is its command's own: the image holds no launcher of boa's.
    const where = `in the image ${pod.spec?.containers?.[0]?.image ?? '(none named)'}`;
    const why = terminated
      ? notRestartable(commandExitOf(terminated), where, terminated.reason === 'StartError')
      : undefined;
    return { ...ended('failed', 'Failed'), ...(why === undefined ? {} : { notRestartable: why }) };
  }
  const runningSince = container?.state?.running?.startedAt;
  if (pod.metadata?.deletionTimestamp && runningSince) {
    // Deleted while it runs, and boa deletes only replicas it no longer wants (whose statuses it
    // ignores): stopped from outside. Said now, not once it has ended: a peer that fails meanwhile,
    // its rendezvous gone, must not be taken for the job failing.
    // The grace the deletion used (kubectl delete --grace-period, a drain's), else the pod's own.
    const graceSeconds =
      pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    const graceMs = graceSeconds * 1000;
    const deletedAt = new Date(pod.metadata.deletionTimestamp).getTime() - graceMs;
    return {
      ...base,
      ...killAt,
      phase: 'stopping',
      // What deleted it, when it says: a node unreachable for 5 minutes (the taint manager), a drain.
      reason: disruptionOf(pod) ?? 'deleted while running',
      interrupted: true,
      ranForMs: Math.max(0, deletedAt - new Date(runningSince).getTime()),
    };
  }
  // Unknown as Pending: a pod on a node gone silent, evicted by the taint manager before it started.
  if (pod.metadata?.deletionTimestamp && (phase === 'Pending' || phase === 'Unknown') && !terminated) {
    // Deleted before it started, and not by boa (it ignores the replicas it stops): most often evicted
    // from a node gone NotReady, whose kubelet may never say it ended. Plain "stopping", its job waited
    // for the start deadline to be failed, with no reason of its own (found in review). Said now, it
    // is a stop from outside that ran 0 s: a failure at once while interruptedMinRunSeconds is above 0
    // (replica-exits.ts: a node that evicts a job as it starts must not resume it forever), with this
    // reason; its next generation still starts only once this pod is gone.
    return {
      ...base,
      ...killAt,
      phase: 'stopping',
      reason: 'deleted before it started',
      interrupted: true,
      ranForMs: 0,
    };
  }
  if (pod.metadata?.deletionTimestamp) return { ...base, ...killAt, phase: 'stopping' };
  if (waiting && STUCK_REASONS.has(waiting) && !transientCreateError(waiting, waitingMessage))
    return { ...base, phase: 'failed', reason: said(waiting, waitingMessage) };
  if (waiting && PULL_REASONS.has(waiting) && pullRefused(waitingMessage ?? ''))
    return { ...base, phase: 'failed', reason: said(waiting, waitingMessage) };
  // Neither started nor ended: as it was when its node last reported (silent-node.ts).
  const silent = silentNodeOf(pod);
  if (silent) {
    const ran = runningSince !== undefined || terminated !== undefined;
    return { ...base, phase: ran ? 'running' : 'starting', reason: silentNodeReason(base.node, silent) };
  }
  if (pod.status?.phase === 'Running') return { ...base, phase: 'running' };
  const hint = waiting === 'ContainerCreating' ? volumeWait(pod) : undefined;
  if (hint) return { ...base, phase: 'starting', reason: said(waiting!, hint) };
  return { ...base, phase: 'starting', ...(waiting ? { reason: said(waiting, waitingMessage) } : {}) };
}

/** Its container ran and has ended (not a pod turned away before it ran): its log will not change. */
export const containerEnded = (pod: V1Pod): boolean =>
  pod.status?.containerStatuses?.[0]?.state?.terminated !== undefined;

/**
 * Turned away by its node's kubelet before it ran: a pod bound by nodeName skips the scheduler, so the
 * kubelet's admission is the first check. Most refusals pass: OutOfnvidia.com/gpu while another job's
 * pod still gives its GPUs up within its grace period (the kubelet counts terminating pods' GPUs as
 * used), Evicted under memory or disk pressure, NodeShutdown while the node goes away (then placement
 * moves the job), UnexpectedAdmissionError from a device plugin. Any Failed pod that never ran counts:
 * the readmission (readmit.ts) tries again and fails a refusal that does not pass (a node without the
 * GPUs, a taint) after a few tries, so none is resumed without bound as an interruption would be.
 */
export function admissionRejected(pod: V1Pod): boolean {
  const ran = pod.status?.containerStatuses?.some((c) => c.state?.terminated || c.state?.running);
  return pod.status?.phase === 'Failed' && !ran;
}

/** Why the pod was stopped from outside, if it was: its deletion, a DisruptionTarget condition, eviction. */
function interruptionOf(pod: V1Pod): string | undefined {
  const target = disruptionOf(pod);
  if (target) return target;
  // Evicted under node pressure, or stopped by a graceful node shutdown on clusters without the
  // DisruptionTarget condition (the kubelet's reason is then Terminated).
  const reason = pod.status?.reason;
  if (reason === 'Evicted' || reason === 'Terminated')
    return `${reason}${pod.status?.message ? `: ${pod.status.message}` : ''}`;
  if (pod.metadata?.deletionTimestamp && !endedBeforeDeletion(pod)) return 'deleted while running';
  return undefined;
}

/**
 * The two clocks compared below, the node's (finishedAt) and the API server's (deletionTimestamp), each
 * to the second: an exit this close to the deletion is taken for the deletion's. Read the other way, a
 * rank 0 that exits 0 at once on SIGTERM would mark its job done (found in review); this way a job that
 * finished on its own just before is resumed from its last checkpoint and finishes again. A node whose
 * clock is further behind widens it by what the pod shows of that (nodeClockLagMs).
 */
const CLOCK_MARGIN_MS = 2_000;

/**
 * How far the node's clock is at least behind the API server's, as the pod shows it: the kubelet
 * stamps `startTime` (node clock) after the API server stamped `creationTimestamp`, so a start before
 * the creation is the node's lag (0 when it shows none).
 */
function nodeClockLagMs(pod: V1Pod): number {
  const created = pod.metadata?.creationTimestamp;
  const started = pod.status?.startTime;
  if (!created || !started) return 0;
  return Math.max(0, new Date(created).getTime() - new Date(started).getTime());
}

/**
 * Its container had ended before the pod was deleted (boa deletes an older generation's pods, one
 * that finished on its own among them): its exit is its own, not the deletion's.
 */
function endedBeforeDeletion(pod: V1Pod): boolean {
  const finishedAt = pod.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt;
  const deletion = pod.metadata?.deletionTimestamp;
  if (!finishedAt || !deletion) return false;
  const graceSeconds =
    pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
  const deletedAt = new Date(deletion).getTime() - graceSeconds * 1000;
  return new Date(finishedAt).getTime() < deletedAt - CLOCK_MARGIN_MS - nodeClockLagMs(pod);
}

/** Why a workload cannot run as a pod, naming the field; undefined when it can. */
/**
 * Variables the NVIDIA container runtime reads to choose a container's GPUs. The device plugin (its
 * default strategy, infra/k8s/device-plugin.ts) hands a pod its GPUs as NVIDIA_VISIBLE_DEVICES, and the
 * kubelet puts the pod spec's env after it, so a job's own value would win: "all" is every GPU of the
 * node, other jobs' included.
 */
const GPU_SELECTION_ENV = /^NVIDIA_(VISIBLE_DEVICES|MIG_CONFIG_DEVICES|MIG_MONITOR_DEVICES)$/;

export function checkPodWorkload(workload: Workload): { field: string; message: string } | undefined {
  if (!workload.image)
    return { field: 'workload.image', message: 'the Kubernetes executor needs a container image' };
  for (const name of Object.keys(workload.env ?? {})) {
    if (GPU_SELECTION_ENV.test(name))
      return {
        field: 'workload.env',
        message: `${name} is set by boa's GPU allocation (the device plugin), not by the job: remove it`,
      };
  }
  if (/\s/.test(workload.image)) {
    return { field: 'workload.image', message: `image "${workload.image}" must not contain spaces` };
  }
  if (workload.memoryPerGpu !== undefined) {
    try {
      scaleQuantity(workload.memoryPerGpu, 1);
    } catch (error) {
      return { field: 'workload.memoryPerGpu', message: (error as Error).message };
    }
  }
  return undefined;
}
