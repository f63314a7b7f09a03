import type { KubeApiCore } from './core.ts';
import type { KubeObject } from './objects.ts';

export interface NodeOptions {
  /** Default: ip-10-0-<n>-<n>.ec2.internal, as EKS names nodes. */
  readonly name?: string;
  /** Allocatable and capacity nvidia.com/gpu. */
  readonly gpus?: number;
  readonly ready?: boolean;
  readonly zone?: string;
  /** EC2 instance id for spec.providerID; default a fresh i-0... id. */
  readonly instanceId?: string;
  readonly instanceType?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly cpu?: string;
  readonly memory?: string;
}

export interface KubeletOptions {
  /** Pods bound to a ready node start by themselves this many ms after creation (undefined: only on startPods()). */
  readonly autoStartMs?: number;
  /** A terminating pod's container exits this many ms after SIGTERM (undefined: only on finishTermination()). */
  readonly autoStopMs?: number;
}

/**
 * The fake kubelets of all nodes, driven by the test: pods move Pending -> Running, containers end with
 * an exit code, pods are killed from outside, terminating pods go when their container stops (or, as with
 * SIGKILL, when the grace period runs out in real time). Nodes are added and removed with GPUs and Ready.
 */
export class FakeKubelet {
  private nodeCount = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Each started container's environment, secretKeyRefs resolved, by namespace/pod/container. */
  private readonly envs = new Map<string, Record<string, string>>();

  constructor(
    private readonly core: KubeApiCore,
    options: KubeletOptions,
    private readonly now: () => number,
  ) {
    core.onTerminating = (pod) => {
      const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
      const stopMs = options.autoStopMs === undefined ? graceMs : Math.min(graceMs, options.autoStopMs);
      this.later(stopMs, () => this.finishTermination(pod.metadata.name));
    };
    core.store.subscribe(core.store.currentVersion(), (event) => {
      if (options.autoStartMs === undefined) return;
      if (event.resource === 'pods' && event.type === 'ADDED') {
        const name = event.object.metadata.name;
        this.later(options.autoStartMs, () => this.startPods([name]));
      } else if (
        ['nodes', 'secrets', 'persistentvolumeclaims'].includes(event.resource) &&
        event.type !== 'DELETED'
      ) {
        // A node ready, or a Secret or claim a waiting pod needs: the real kubelet retries its pods too.
        this.later(options.autoStartMs, () => this.startPods());
      }
    });
  }

  /** Adds a node (kubelet registered), Ready unless told otherwise. */
  addNode(options: NodeOptions = {}): KubeObject {
    this.nodeCount++;
    const n = this.nodeCount;
    const name = options.name ?? `ip-10-0-${Math.floor(n / 250)}-${n % 250}.ec2.internal`;
    const zone = options.zone ?? 'us-east-1a';
    const instanceId = options.instanceId ?? `i-0${n.toString(16).padStart(16, '0')}`;
    const instanceType = options.instanceType ?? 'g4dn.12xlarge';
    const resources = {
      cpu: options.cpu ?? '48',
      memory: options.memory ?? '192Gi',
      pods: '110',
      'nvidia.com/gpu': String(options.gpus ?? 4),
    };
    return this.core.create('nodes', undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'node.kubernetes.io/instance-type': instanceType,
          'topology.kubernetes.io/zone': zone,
          ...options.labels,
        },
      } as unknown as KubeObject['metadata'],
      spec: { providerID: `aws:///${zone}/${instanceId}` },
      status: {
        capacity: resources,
        allocatable: resources,
        conditions: [this.readyCondition(options.ready ?? true)],
        addresses: [{ type: 'InternalIP', address: `10.0.${Math.floor(n / 250)}.${n % 250}` }],
      },
    });
  }

  /** Sets the node's Ready condition (a NotReady kubelet, or one that recovered). */
  setNodeReady(name: string, ready: boolean): KubeObject {
    const node = this.core.store.update('nodes', undefined, name, (node) => ({
      ...node,
      status: { ...node.status, conditions: [this.readyCondition(ready)] },
    }));
    // A kubelet back confirms the stops it missed.
    if (ready)
      for (const pod of [...this.core.store.peek('pods')])
        if (pod.spec?.nodeName === name && pod.metadata.deletionTimestamp)
          this.finishTermination(pod.metadata.name);
    return node;
  }

  /**
   * Deletes the node; its pods are deleted at once, as the pod garbage collector does for gone nodes,
   * unless `collectPods` is false: the collector has not run yet (it waits 40 s for a node to come
   * back), or is not running, and a pod Terminating there stays so.
   */
  removeNode(name: string, options: { collectPods?: boolean } = {}): void {
    this.core.store.remove('nodes', undefined, name);
    if (options.collectPods === false) return;
    const onNode = [...this.core.store.peek('pods')].filter((pod) => pod.spec?.nodeName === name);
    for (const pod of onNode) this.core.store.remove('pods', pod.metadata.namespace, pod.metadata.name);
  }

  /** Starts every Pending pod bound to a ready node (or only `names`); returns the names started. */
  startPods(names?: readonly string[]): string[] {
    const started: string[] = [];
    const wanted = names && new Set(names);
    const candidates = [...this.core.store.peek('pods')].filter(
      (pod) => (!wanted || wanted.has(pod.metadata.name)) && pod.status?.phase === 'Pending',
    );
    for (const pod of candidates) {
      if (pod.status?.phase !== 'Pending' || pod.metadata.deletionTimestamp) continue;
      const node = pod.spec?.nodeName && this.core.store.get('nodes', undefined, pod.spec.nodeName);
      const ready =
        node && node.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
      if (!ready) continue;
      // The kubelet's own admission (pods bound by nodeName skip the scheduler): GPUs still held by the
      // node's running pods, terminating ones included, are not free; a pod that does not fit is rejected.
      const capacity = Number(node.status?.allocatable?.['nvidia.com/gpu'] ?? 0);
      const requested = gpusOf(pod);
      const used = [...this.core.store.peek('pods')]
        .filter((p) => p.spec?.nodeName === node.metadata.name && p.status?.phase === 'Running')
        .reduce((sum, p) => sum + gpusOf(p), 0);
      if (requested > 0 && used + requested > capacity) {
        this.setStatus(pod, {
          phase: 'Failed',
          reason: 'OutOfnvidia.com/gpu',
          message:
            "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, " +
            `requested: ${requested}, used: ${used}, capacity: ${capacity}`,
        });
        continue;
      }
      if (!this.claimsMountable(pod)) {
        // As the kubelet's volume manager: volumes come before the sandbox, so the pod waits, its sandbox
        // not ready (FailedMount is an Event), retried later.
        this.setStatus(pod, {
          phase: 'Pending',
          conditions: [{ type: 'PodReadyToStartContainers', status: 'False' }],
          containerStatuses: containerNames(pod).map((name) => ({
            name,
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ContainerCreating' } },
          })),
        });
        continue;
      }
      const env = this.resolveEnv(pod);
      if (typeof env === 'string') {
        // As the kubelet does: the pod stays Pending, its container waiting, retried later.
        this.setStatus(pod, {
          phase: 'Pending',
          containerStatuses: containerNames(pod).map((name) => ({
            name,
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'CreateContainerConfigError', message: env } },
          })),
        });
        continue;
      }
      for (const [name, vars] of env)
        this.envs.set(`${pod.metadata.namespace}/${pod.metadata.name}/${name}`, vars);
      const startedAt = new Date(this.now()).toISOString();
      this.setStatus(pod, {
        phase: 'Running',
        startTime: startedAt,
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: containerNames(pod).map((name) => ({
          name,
          ready: true,
          restartCount: 0,
          state: { running: { startedAt } },
        })),
      });
      started.push(pod.metadata.name);
    }
    return started;
  }

  /**
   * The pod's containers wait with this reason and message, the pod Pending: a create or pull the
   * kubelet retries (CreateContainerError, ErrImagePull). startPods() starts it when the test says so.
   */
  waitOn(podName: string, reason: string, message?: string): KubeObject {
    const pod = this.pod(podName);
    return this.setStatus(pod, {
      phase: 'Pending',
      containerStatuses: containerNames(pod).map((name) => ({
        name,
        ready: false,
        restartCount: 0,
        state: { waiting: { reason, ...(message === undefined ? {} : { message }) } },
      })),
    });
  }

  /** The pod's containers end with this exit code: Succeeded on 0, Failed otherwise. */
  exit(podName: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error'): KubeObject {
    const pod = this.pod(podName);
    const finishedAt = new Date(this.now()).toISOString();
    // As the kubelet reports it: the terminated state keeps when the container started.
    const startedAt = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? finishedAt;
    const updated = this.setStatus(pod, {
      ...pod.status,
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: containerNames(pod).map((name) => ({
        name,
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode, reason, startedAt, finishedAt } },
      })),
    });
    // A terminating pod whose container has stopped is gone.
    if (pod.metadata.deletionTimestamp) this.finishTermination(podName);
    return updated;
  }

  /** Killed from outside (OOM killer, a human with kill -9): exit code 137. */
  kill(podName: string, reason = 'OOMKilled'): KubeObject {
    return this.exit(podName, 137, reason);
  }

  /**
   * Terminating pods (or only `podName`) whose containers have stopped are removed. Returns how many.
   * Not on a node that is NotReady: only its kubelet confirms a stop, so a real API server keeps such a
   * pod Terminating until the node recovers or is deleted (removeNode, the pod garbage collector).
   */
  finishTermination(podName?: string): number {
    let removed = 0;
    const done = [...this.core.store.peek('pods')].filter(
      (pod) =>
        pod.metadata.deletionTimestamp &&
        (!podName || pod.metadata.name === podName) &&
        !this.onSilentNode(pod),
    );
    for (const pod of done) {
      this.core.store.remove('pods', pod.metadata.namespace, pod.metadata.name);
      removed++;
    }
    return removed;
  }

  private onSilentNode(pod: KubeObject): boolean {
    const node = pod.spec?.nodeName && this.core.store.get('nodes', undefined, pod.spec.nodeName);
    return (
      Boolean(node) && !node.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')
    );
  }

  /** The pod's container writes `text` to its output (what `kubectl logs` shows). */
  writeLog(podName: string, text: string): void {
    const pod = this.pod(podName);
    this.core.logs.write(`${pod.metadata.namespace}/${podName}`, text);
  }

  /** The kubelet rotates the pod's log: the API server no longer serves what it wrote so far. */
  rotateLog(podName: string): void {
    const pod = this.pod(podName);
    this.core.logs.rotate(`${pod.metadata.namespace}/${podName}`);
  }

  /** The environment the pod's (first) container was started with, secretKeyRefs resolved. */
  environment(podName: string, container?: string): Record<string, string> | undefined {
    const pod = this.pod(podName);
    return this.envs.get(`${pod.metadata.namespace}/${podName}/${container ?? containerNames(pod)[0]}`);
  }

  /** The pod of that name (in any namespace; the tests' pod names are unique). */
  pod(name: string): KubeObject {
    const pod = [...this.core.store.peek('pods')].find((p) => p.metadata.name === name);
    if (!pod) throw new Error(`fake kubelet: no pod named ${name}`);
    return structuredClone(pod) as KubeObject;
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Every volume claim the pod mounts exists in its namespace, Bound, and is not being deleted. */
  private claimsMountable(pod: Readonly<KubeObject>): boolean {
    return (pod.spec?.volumes ?? []).every((v: { persistentVolumeClaim?: { claimName: string } }) => {
      if (!v.persistentVolumeClaim) return true;
      const claim = this.core.store.get(
        'persistentvolumeclaims',
        pod.metadata.namespace,
        v.persistentVolumeClaim.claimName,
      );
      return claim !== undefined && !claim.metadata.deletionTimestamp && claim.status?.phase === 'Bound';
    });
  }

  /**
   * Each container's env by name: plain values, and secretKeyRefs read from the pod's namespace; the
   * kubelet's message when a Secret or key is missing (an optional ref is then left out).
   */
  private resolveEnv(pod: Readonly<KubeObject>): Map<string, Record<string, string>> | string {
    const out = new Map<string, Record<string, string>>();
    for (const container of pod.spec?.containers ?? []) {
      const vars: Record<string, string> = {};
      for (const e of container.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) {
          if (!e.valueFrom) vars[e.name] = e.value ?? '';
          continue;
        }
        const secret = this.core.store.get('secrets', pod.metadata.namespace, ref.name);
        const value = (secret?.data as Record<string, string> | undefined)?.[ref.key];
        if (value !== undefined) vars[e.name] = Buffer.from(value, 'base64').toString('utf8');
        else if (ref.optional) continue;
        else if (!secret) return `secret "${ref.name}" not found`;
        else return `couldn't find key ${ref.key} in Secret ${pod.metadata.namespace}/${ref.name}`;
      }
      out.set(container.name, vars);
    }
    return out;
  }

  private setStatus(pod: KubeObject, status: Record<string, unknown>): KubeObject {
    return this.core.store.update('pods', pod.metadata.namespace, pod.metadata.name, (p) => ({
      ...p,
      status,
    }));
  }

  private readyCondition(ready: boolean) {
    return {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'KubeletReady' : 'KubeletNotReady',
      lastTransitionTime: new Date(this.now()).toISOString(),
    };
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      try {
        action();
      } catch {
        // The pod or node may be gone by then; the kubelet shrugs as the real one does.
      }
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }
}

function gpusOf(pod: KubeObject): number {
  const resources = pod.spec?.containers?.[0]?.resources;
  return Number(resources?.limits?.['nvidia.com/gpu'] ?? resources?.requests?.['nvidia.com/gpu'] ?? 0);
}

function containerNames(pod: KubeObject): string[] {
  return (pod.spec?.containers ?? []).map((c: { name: string }) => c.name);
}
