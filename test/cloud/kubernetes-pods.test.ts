import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubernetesConfig } from '../../src/cloud/kubernetes/config.ts';
import { rank0Address, tokenSecretName } from '../../src/cloud/kubernetes/names.ts';
import {
  checkPodWorkload,
  podManifest,
  replicaStatusOf,
  serviceManifest,
} from '../../src/cloud/kubernetes/pods.ts';
import { scaleQuantity } from '../../src/cloud/kubernetes/quantity.ts';
import type { ReplicaSpec } from '../../src/service/ports.ts';

const config = kubernetesConfig({
  namespace: 'train',
  serviceAccountName: 'trainer',
  imagePullSecrets: ['ecr-pull', 'ghcr-pull'],
  terminationGraceSeconds: 90,
});

const replica: ReplicaSpec = {
  jobId: 42,
  generation: 3,
  rank: 1,
  node: 'ip-10-0-1-7.ec2.internal',
  gpus: 2,
  workload: {
    image: 'repo/train:1.0',
    command: ['python3', 'train.py'],
    args: ['--epochs', '90'],
    env: { USER_VAR: 'x', WORLD_SIZE: 'user value loses' },
    cpuPerGpu: 3.5,
    memoryPerGpu: '16Gi',
    checkpoint: { volumeClaim: 'ckpt' },
  },
  env: { WORLD_SIZE: '6', NODE_RANK: '1', MASTER_ADDR: rank0Address(42, 'train'), MASTER_PORT: '29500' },
};

describe('Kubernetes pod and service manifests', () => {
  const pod = podManifest(replica, { uid: 'svc-uid' }, config);
  const container = pod.spec!.containers[0]!;
  const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));

  it('pins the pod to its node with exactly its GPUs, never restarted by the kubelet', () => {
    expect(pod.metadata!.name).toBe('boa-job-42-g3-r1');
    expect(pod.metadata!.namespace).toBe('train');
    expect(pod.spec!.nodeName).toBe('ip-10-0-1-7.ec2.internal');
    expect(pod.spec!.restartPolicy).toBe('Never');
    expect(pod.spec!.terminationGracePeriodSeconds).toBe(90);
    expect(container.resources!.requests).toEqual({ 'nvidia.com/gpu': '2', cpu: '7000m', memory: '32Gi' });
    expect(container.resources!.limits).toEqual({ 'nvidia.com/gpu': '2', memory: '32Gi' });
    // The GPU nodes' taint, by boa's key and by the old one nodes from before an upgrade may carry.
    expect(pod.spec!.tolerations).toEqual([
      { key: 'boa.dev/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('labels the pod with job, generation and rank, owned by the job Service', () => {
    expect(pod.metadata!.labels).toEqual({
      'app.kubernetes.io/managed-by': 'boa',
      'app.kubernetes.io/component': 'job',
      'boa.dev/job-id': '42',
      'boa.dev/generation': '3',
      'boa.dev/rank': '1',
      // Reached only through its job's NetworkPolicy (the namespace admits pods without it).
      'boa.dev/network': 'job',
    });
    expect(pod.metadata!.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'boa-job-42', uid: 'svc-uid', controller: true },
    ]);
    expect(pod.spec!.hostname).toBe('rank-1');
    expect(pod.spec!.subdomain).toBe('boa-job-42');
  });

  it("runs the workload with the service's environment over the user's, and the checkpoint claim", () => {
    expect(container.image).toBe('repo/train:1.0');
    expect(container.command).toEqual(['python3', 'train.py']);
    expect(container.args).toEqual(['--epochs', '90']);
    expect(env).toMatchObject({
      USER_VAR: 'x',
      WORLD_SIZE: '6',
      NODE_RANK: '1',
      MASTER_ADDR: 'rank-0.boa-job-42.train.svc',
      BOA_CHECKPOINT_DIR: '/checkpoint',
    });
    expect(pod.spec!.volumes).toContainEqual({
      name: 'checkpoint',
      persistentVolumeClaim: { claimName: 'ckpt' },
    });
    expect(container.volumeMounts).toContainEqual({ name: 'checkpoint', mountPath: '/checkpoint' });
  });

  it('uses the configured service account and image pull secrets, and none when not configured', () => {
    expect(pod.spec!.serviceAccountName).toBe('trainer');
    expect(pod.spec!.imagePullSecrets).toEqual([{ name: 'ecr-pull' }, { name: 'ghcr-pull' }]);
    expect(pod.spec!.automountServiceAccountToken).toBeUndefined();
    const plain = podManifest(replica, { uid: 'u' }, kubernetesConfig({ namespace: 'train' }));
    expect(plain.spec!.serviceAccountName).toBeUndefined();
    expect(plain.spec!.imagePullSecrets).toBeUndefined();
    // No service account for jobs: the namespace's default token is not mounted into them.
    expect(plain.spec!.automountServiceAccountToken).toBe(false);
    // Hardened as far as no training image minds.
    expect(plain.spec!.containers[0]!.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['NET_RAW'] },
    });
  });

  it("reads the job's token from the job's Secret: nowhere in the pod spec, every other variable plain", () => {
    const token = 'tok-Q2hhbmdlTWVPbmx5SW5UZXN0cy0wMTIzNDU2Nzg5';
    const withToken = { ...replica, env: { ...replica.env, BOA_JOB_TOKEN: token } };
    const uid = '0b6f6c1e-2f0a-4c1e-9a57-3f1d2c4b5a69';
    const spec = podManifest(withToken, { uid }, config);
    const serialized = JSON.stringify(spec);
    expect(serialized).not.toContain(token);
    expect(serialized).not.toContain(Buffer.from(token).toString('base64'));
    const vars = spec.spec!.containers[0]!.env!;
    expect(vars.find((e) => e.name === 'BOA_JOB_TOKEN')).toEqual({
      name: 'BOA_JOB_TOKEN',
      // The Secret of this Service (its uid): a Service made again never reads the old one's.
      valueFrom: { secretKeyRef: { name: `boa-job-42-token-${uid}`, key: 'token' } },
    });
    expect(vars.filter((e) => e.valueFrom)).toHaveLength(1);
    expect(vars.find((e) => e.name === 'NODE_RANK')).toEqual({ name: 'NODE_RANK', value: '1' });
    // A DNS-1123 subdomain for the largest job id (a Secret's name may be 253 characters).
    const largest = tokenSecretName(999_999_999_999_999, uid);
    expect(largest).toBe(`boa-job-999999999999999-token-${uid}`);
    expect(largest).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(largest.length).toBeLessThanOrEqual(253);
  });

  it('makes a headless Service publishing not-ready pods, selecting only the job', () => {
    const svc = serviceManifest(42, config);
    expect(svc.metadata!.name).toBe('boa-job-42');
    expect(svc.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { 'app.kubernetes.io/managed-by': 'boa', 'boa.dev/job-id': '42' },
    });
  });
});

describe('replica status from a pod', () => {
  /** When a deleted pod's grace ends (its deletionTimestamp): SIGKILL at the latest, reported as killAt. */
  const DELETION = Date.parse('2026-11-27T06:20:00Z');
  const base: V1Pod = podManifest(replica, { uid: 'u' }, config);
  const withStatus = (status: V1Pod['status'], deleting = false): V1Pod => ({
    ...base,
    metadata: { ...base.metadata, ...(deleting ? { deletionTimestamp: new Date(DELETION) } : {}) },
    status,
  });
  const ids = { jobId: 42, generation: 3, rank: 1, node: 'ip-10-0-1-7.ec2.internal' };

  it('maps phases, exit codes and reasons', () => {
    expect(replicaStatusOf(withStatus({ phase: 'Pending' }))).toEqual({ ...ids, phase: 'starting' });
    expect(replicaStatusOf(withStatus({ phase: 'Running' }))).toEqual({ ...ids, phase: 'running' });
    expect(replicaStatusOf(withStatus({ phase: 'Running' }, true))).toEqual({
      ...ids,
      phase: 'stopping',
      killAt: DELETION,
    });
    // Deleted by someone else before it started (evicted from a NotReady node): interrupted, so its job
    // resumes instead of waiting for the start deadline to fail it.
    const waiting = [
      {
        name: 'train',
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: 'ContainerCreating' } },
      },
    ];
    for (const status of [{ phase: 'Pending' }, { phase: 'Pending', containerStatuses: waiting }])
      expect(replicaStatusOf(withStatus(status, true))).toEqual({
        ...ids,
        phase: 'stopping',
        killAt: DELETION,
        reason: 'deleted before it started',
        interrupted: true,
        ranForMs: 0,
      });
    const terminated = (exitCode: number, reason: string) => [
      {
        name: 'train',
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode, reason } },
      },
    ];
    expect(
      replicaStatusOf(withStatus({ phase: 'Succeeded', containerStatuses: terminated(0, 'Completed') })),
    ).toEqual({
      ...ids,
      phase: 'succeeded',
      exitCode: 0,
      reason: 'Completed',
    });
    expect(
      replicaStatusOf(withStatus({ phase: 'Failed', containerStatuses: terminated(137, 'OOMKilled') })),
    ).toEqual({
      ...ids,
      phase: 'failed',
      exitCode: 137,
      reason:
        "OOMKilled: the container used more than its memory limit, 32Gi at 2 GPUs (workload.memoryPerGpu times the replica's GPUs): raise workload.memoryPerGpu or lower the job's memory use",
    });
    // containerd says OOMKilled of a container that exited 0 after a child process was killed: no advice.
    expect(
      replicaStatusOf(withStatus({ phase: 'Succeeded', containerStatuses: terminated(0, 'OOMKilled') })),
    ).toEqual({ ...ids, phase: 'succeeded', exitCode: 0, reason: 'OOMKilled' });
  });

  it("marks a container's exit 127 or 126 (containerd's StartError of a program not there or not runnable too) as not worth a restart, naming the image; no other exit", () => {
    const failed = (terminated: { exitCode: number; reason: string; message?: string }) =>
      replicaStatusOf(
        withStatus({
          phase: 'Failed',
          containerStatuses: [
            { name: 'train', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated } },
          ],
        }),
      );
    const own127 = failed({ exitCode: 127, reason: 'Error' });
    expect(own127).toMatchObject({ phase: 'failed', exitCode: 127, reason: 'Error' });
    expect(own127?.notRestartable).toMatch(
      /^not restarted: exit 127 means a command the job ran was not found, which fails the same way at every start; check the command and the PATH in the image repo\/train:1\.0 /,
    );
    expect(failed({ exitCode: 126, reason: 'Error' })?.notRestartable).toMatch(
      /^not restarted: exit 126 means a command the job ran is not executable.* in the image repo\/train:1\.0 /,
    );
    // As containerd reports a command not in the image (runc's exec fails, exit 128): said as not
    // started, not as an exit 127 beside the job's exit code 128 (found in review).
    const startError = (message: string) => failed({ exitCode: 128, reason: 'StartError', message });
    expect(
      startError(
        'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "torchrun": executable file not found in $PATH: unknown',
      )?.notRestartable,
    ).toMatch(/^not restarted: the container's command could not start \(not found\), which fails /);
    expect(
      startError('... unable to start container process: exec: "/app/run.sh": permission denied: unknown')
        ?.notRestartable,
    ).toMatch(/^not restarted: the container's command could not start \(not executable\), which fails /);
    // Any other start error may pass; any other exit is restarted as before.
    expect(startError('error mounting "/x" to rootfs: no such device')?.notRestartable).toBeUndefined();
    for (const exitCode of [1, 2, 125, 128, 137])
      expect(failed({ exitCode, reason: 'Error' })?.notRestartable).toBeUndefined();
    // A pod stopped from outside is interrupted, whatever its exit.
    const evicted = replicaStatusOf({
      ...withStatus({
        phase: 'Failed',
        reason: 'Evicted',
        containerStatuses: [
          {
            name: 'train',
            image: 'i',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 127, reason: 'Error' } },
          },
        ],
      }),
    });
    expect(evicted?.interrupted).toBe(true);
    expect(evicted?.notRestartable).toBeUndefined();
  });

  it("reports a pod its node's kubelet turned away as still starting, not failed", () => {
    const message =
      "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 2, used: 3, capacity: 4";
    expect(replicaStatusOf(withStatus({ phase: 'Failed', reason: 'OutOfnvidia.com/gpu', message }))).toEqual({
      ...ids,
      phase: 'starting',
      reason: `not admitted by its node yet: ${message}`,
    });
    // Every refusal before the pod ran: under node pressure, while the node shuts down, a device
    // plugin's error, and one that will not pass (the readmission fails that after a few tries).
    for (const [reason, message] of [
      ['Evicted', 'The node had condition: [MemoryPressure]. '],
      ['NodeShutdown', 'Pod was rejected as the node is shutting down.'],
      ['UnexpectedAdmissionError', 'Allocate failed due to no healthy devices present'],
      ['NodeAffinity', "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match"],
    ]) {
      expect(replicaStatusOf(withStatus({ phase: 'Failed', reason, message }))).toEqual({
        ...ids,
        phase: 'starting',
        reason: `not admitted by its node yet: ${message}`,
      });
    }
    // A pod that ran and then failed is a failure whatever its reason says.
    const ran = [
      {
        name: 'train',
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 1 } },
      },
    ];
    expect(
      replicaStatusOf(withStatus({ phase: 'Failed', reason: 'OutOfmemory', containerStatuses: ran })),
    ).toMatchObject({ phase: 'failed', exitCode: 1 });
  });

  it('reports a pod stopped by someone else as interrupted, never succeeded, even when it exited 0', () => {
    const exited = (exitCode: number) => [
      {
        name: 'train',
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' } },
      },
    ];
    // Deleted by a drain: SIGTERM, the job checkpoints and exits 0.
    expect(replicaStatusOf(withStatus({ phase: 'Succeeded', containerStatuses: exited(0) }, true))).toEqual({
      ...ids,
      phase: 'failed',
      exitCode: 0,
      reason: 'deleted while running',
      interrupted: true,
    });
    // Its container had ended on its own before the pod was deleted (boa deletes an older generation's
    // pods): its exit is its own. One that ended after the deletion was asked for is the deletion's.
    const deletion = new Date('2026-11-28T12:00:00Z');
    const graceSeconds = base.spec?.terminationGracePeriodSeconds ?? 30;
    const finished = (msBeforeDeletionAsked: number) =>
      ({
        ...base,
        metadata: { ...base.metadata, deletionTimestamp: deletion },
        status: {
          phase: 'Succeeded',
          containerStatuses: [
            {
              ...exited(0)[0]!,
              state: {
                terminated: {
                  exitCode: 0,
                  reason: 'Completed',
                  finishedAt: new Date(deletion.getTime() - graceSeconds * 1000 - msBeforeDeletionAsked),
                },
              },
            },
          ],
        },
      }) as V1Pod;
    expect(replicaStatusOf(finished(60_000))).toEqual({
      ...ids,
      phase: 'succeeded',
      exitCode: 0,
      reason: 'Completed',
      // When its container ended: a job that finished while the service was down finishes then.
      endedAt: deletion.getTime() - graceSeconds * 1000 - 60_000,
    });
    expect(replicaStatusOf(finished(-1000))).toMatchObject({ phase: 'failed', interrupted: true });
    // A rank 0 exiting 0 at once on SIGTERM, on a node whose clock is a second behind the API
    // server's (each stamped to the second): the deletion's, or its job would be marked done.
    expect(replicaStatusOf(finished(1000))).toMatchObject({ phase: 'failed', interrupted: true });
    // On a node 10 s behind, as its pod shows (the kubelet's startTime 9 s before the API server's
    // creationTimestamp), an exit stamped 5 s before the deletion is still the deletion's; one 15 s
    // before is the job's own.
    const onLaggingNode = (msBeforeDeletionAsked: number): V1Pod => {
      const pod = finished(msBeforeDeletionAsked);
      const created = new Date('2026-11-28T11:00:00Z');
      return {
        ...pod,
        metadata: { ...pod.metadata, creationTimestamp: created },
        status: { ...pod.status, startTime: new Date(created.getTime() - 9_000) },
      };
    };
    expect(replicaStatusOf(onLaggingNode(5_000))).toMatchObject({ phase: 'failed', interrupted: true });
    expect(replicaStatusOf(onLaggingNode(15_000))).toMatchObject({ phase: 'succeeded', exitCode: 0 });
    // A spot interruption or preemption marks the pod before it goes.
    const disrupted = {
      phase: 'Succeeded',
      containerStatuses: exited(0),
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'drain' },
      ],
    };
    expect(replicaStatusOf(withStatus(disrupted))).toEqual({
      ...ids,
      phase: 'failed',
      exitCode: 0,
      reason: 'DisruptionTarget: EvictionByEvictionAPI (drain)',
      interrupted: true,
    });
    // Evicted by the kubelet under node pressure while it ran.
    expect(
      replicaStatusOf(
        withStatus({
          phase: 'Failed',
          reason: 'Evicted',
          message: 'low on memory',
          containerStatuses: exited(137),
        }),
      ),
    ).toEqual({
      ...ids,
      phase: 'failed',
      exitCode: 137,
      reason: 'Evicted: low on memory',
      interrupted: true,
    });
    // Stopped by a graceful node shutdown on a cluster without the DisruptionTarget condition.
    const shutdown = {
      phase: 'Failed',
      reason: 'Terminated',
      message: 'Pod was terminated in response to imminent node shutdown.',
      containerStatuses: exited(0),
    };
    expect(replicaStatusOf(withStatus(shutdown))).toMatchObject({
      phase: 'failed',
      exitCode: 0,
      interrupted: true,
    });
    // Deleted by someone else while it runs: interrupted already while it stops (its grace period is
    // 90 s here, so the deletion was 90 s before deletionTimestamp), before a peer can fail for it.
    const startedAt = new Date('2026-11-27T06:00:00Z');
    const running = {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'train',
          image: 'i',
          imageID: '',
          ready: true,
          restartCount: 0,
          state: { running: { startedAt } },
        },
      ],
    };
    const deleting: V1Pod = {
      ...withStatus(running),
      metadata: { ...base.metadata, deletionTimestamp: new Date('2026-11-27T06:11:30Z') },
    };
    expect(replicaStatusOf(deleting)).toEqual({
      ...ids,
      phase: 'stopping',
      killAt: Date.parse('2026-11-27T06:11:30Z'),
      reason: 'deleted while running',
      interrupted: true,
      ranForMs: 600_000,
    });
    // Its node unreachable for 5 minutes: the taint manager marks and deletes it; no kubelet confirms
    // the stop, so it stays Terminating, and what deleted it is said.
    const unreachable: V1Pod = {
      ...deleting,
      status: {
        ...running,
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'DeletionByTaintManager',
            message: 'Taint manager: deleting due to NoExecute taint',
          },
        ],
      },
    };
    expect(replicaStatusOf(unreachable)).toEqual({
      ...ids,
      phase: 'stopping',
      killAt: Date.parse('2026-11-27T06:11:30Z'),
      reason: 'DisruptionTarget: DeletionByTaintManager (Taint manager: deleting due to NoExecute taint)',
      interrupted: true,
      ranForMs: 600_000,
    });
    // Its node deleted: the pod garbage collector marks the pod Failed, DisruptionTarget, before it
    // deletes it, and writes nothing of the container (no kubelet is left to): it ran until marked.
    const collected = {
      ...running,
      phase: 'Failed',
      conditions: [
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
          lastTransitionTime: new Date('2026-11-27T06:10:00Z'),
        },
      ],
    };
    expect(replicaStatusOf(withStatus(collected))).toEqual({
      ...ids,
      phase: 'failed',
      reason: 'DisruptionTarget: DeletionByPodGC (PodGC: node no longer exists)',
      interrupted: true,
      ranForMs: 600_000,
    });
    // Marked not Ready as its node went silent, before the collector came: it ran until then.
    const silent = { type: 'Ready', status: 'False', lastTransitionTime: new Date('2026-11-27T06:08:00Z') };
    const collectedSilent = { ...collected, conditions: [silent, ...collected.conditions] };
    expect(replicaStatusOf(withStatus(collectedSilent))?.ranForMs).toBe(480_000);
    // A condition that is not True, or another condition, changes nothing.
    const notDisrupted = {
      ...disrupted,
      conditions: [{ type: 'DisruptionTarget', status: 'False', reason: 'x' }],
    };
    expect(replicaStatusOf(withStatus(notDisrupted))).toMatchObject({ phase: 'succeeded' });
    expect(replicaStatusOf(withStatus(notDisrupted))?.interrupted).toBeUndefined();
  });

  const waitingOn = (reason: string, message?: string) =>
    withStatus({
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'train',
          image: 'i',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason, ...(message ? { message } : {}) } },
        },
      ],
    });

  it('fails a pull the registry refuses at once, with its message, so a wrong image does not wait', () => {
    const message =
      'failed to pull and unpack image "docker.io/repo/trian:1": failed to resolve reference: docker.io/repo/trian:1: not found';
    expect(replicaStatusOf(waitingOn('ErrImagePull', message))).toEqual({
      ...ids,
      phase: 'failed',
      reason: `ErrImagePull: ${message}`,
    });
    const denied = 'pull access denied for repo/train, repository does not exist or may require docker login';
    expect(replicaStatusOf(waitingOn('ErrImagePull', denied))).toMatchObject({ phase: 'failed' });
    expect(replicaStatusOf(waitingOn('InvalidImageName', "couldn't parse image reference"))).toEqual({
      ...ids,
      phase: 'failed',
      reason: "InvalidImageName: couldn't parse image reference",
    });
    expect(replicaStatusOf(waitingOn('CreateContainerConfigError'))).toEqual({
      ...ids,
      phase: 'failed',
      reason: 'CreateContainerConfigError',
    });
  });

  it('a pull that fails for a passing cause (throttled, a 5xx, a timeout) or in back-off is starting, with its reason: the start deadline catches one that never passes', () => {
    for (const [reason, message] of [
      ['ErrImagePull', 'failed to pull: 429 Too Many Requests (toomanyrequests)'],
      ['ErrImagePull', 'rpc error: code = Unknown desc = 503 Service Unavailable'],
      ['ErrImagePull', 'dial tcp 10.0.0.1:443: i/o timeout'],
      ['ImagePullBackOff', 'Back-off pulling image "repo/train:1"'],
    ] as const) {
      expect(replicaStatusOf(waitingOn(reason, message))).toEqual({
        ...ids,
        phase: 'starting',
        reason: `${reason}: ${message}`,
      });
    }
    // A kubelet's message can be long: kept within 400 characters.
    const long = replicaStatusOf(waitingOn('ContainerCreating', 'x'.repeat(2000)));
    expect(long?.reason).toHaveLength(400);
    expect(long?.phase).toBe('starting');
  });

  it('a pod waiting in ContainerCreating before its sandbox (volumes not mounted) names its claim, still starting: the start deadline fails it', () => {
    const creating = (sandboxReady: 'True' | 'False' | undefined, pod = base): V1Pod => ({
      ...pod,
      status: {
        ...waitingOn('ContainerCreating').status,
        ...(sandboxReady
          ? { conditions: [{ type: 'PodReadyToStartContainers', status: sandboxReady }] }
          : {}),
      },
    });
    const stuck = replicaStatusOf(creating('False'));
    expect(stuck).toMatchObject({ ...ids, phase: 'starting' });
    expect(stuck?.reason).toBe(
      'ContainerCreating: volumes or network not ready: it mounts volume claim "ckpt" (ReadWriteMany needed); ' +
        'kubectl -n train describe pod boa-job-42-g3-r1 shows FailedMount or FailedAttachVolume events if the volume is why',
    );
    // Sandbox made (an image pulling), or a cluster without the condition: nothing said that is not known.
    expect(replicaStatusOf(creating('True'))?.reason).toBe('ContainerCreating');
    expect(replicaStatusOf(creating(undefined))?.reason).toBe('ContainerCreating');
    const noClaim = podManifest(
      { ...replica, workload: { image: 'i', command: ['c'] } },
      { uid: 'u' },
      config,
    );
    expect(replicaStatusOf(creating('False', noClaim))?.reason).toBe(
      'ContainerCreating: pod sandbox not ready (network?): kubectl -n train describe pod boa-job-42-g3-r1 shows why',
    );
  });

  it('ignores pods without boa labels', () => {
    expect(replicaStatusOf({ metadata: { name: 'x', labels: { app: 'other' } } })).toBeUndefined();
  });
});

describe('workload checks and quantities', () => {
  it('names the field that cannot run on Kubernetes', () => {
    expect(checkPodWorkload({ command: ['a'] })?.field).toBe('workload.image');
    expect(checkPodWorkload({ command: ['a'], image: 'my image' })).toEqual({
      field: 'workload.image',
      message: 'image "my image" must not contain spaces',
    });
    expect(checkPodWorkload({ command: ['a'], image: 'i', memoryPerGpu: '16 gigs' })?.field).toBe(
      'workload.memoryPerGpu',
    );
    expect(checkPodWorkload({ command: ['a'], image: 'i', memoryPerGpu: '16Gi' })).toBeUndefined();
  });

  // Found in review: the device plugin hands a pod its GPUs as NVIDIA_VISIBLE_DEVICES and the kubelet
  // puts the pod spec's env after it, so a job's "all" would see every GPU of its node.
  it("refuses, and never passes on, a job's own choice of the node's GPUs", () => {
    const env = { NVIDIA_VISIBLE_DEVICES: 'all', NVIDIA_MIG_CONFIG_DEVICES: 'all', KEEP: '1' };
    expect(checkPodWorkload({ command: ['a'], image: 'i', env })).toEqual({
      field: 'workload.env',
      message:
        "NVIDIA_VISIBLE_DEVICES is set by boa's GPU allocation (the device plugin), not by the job: remove it",
    });
    expect(
      checkPodWorkload({ command: ['a'], image: 'i', env: { NVIDIA_DRIVER_CAPABILITIES: 'all' } }),
    ).toBeUndefined();
    // A job stored before the check.
    const pod = podManifest({ ...replica, workload: { ...replica.workload, env } }, { uid: 'u' }, config);
    const names = pod.spec?.containers[0]?.env?.map((e) => e.name) ?? [];
    expect(names).toContain('KEEP');
    expect(names.filter((n) => n.startsWith('NVIDIA_'))).toEqual([]);
  });

  it('scales quantities in their own unit', () => {
    expect(scaleQuantity('16Gi', 3)).toBe('48Gi');
    expect(scaleQuantity('1.5Gi', 3)).toBe('4.5Gi');
    expect(scaleQuantity('512', 2)).toBe('1024');
    expect(() => scaleQuantity('-1Gi', 2)).toThrow(/not a Kubernetes quantity/);
  });
});
