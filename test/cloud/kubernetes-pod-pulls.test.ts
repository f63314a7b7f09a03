/** A pod waiting on its image pull or its sandbox: failed at once only when the registry refuses. */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podManifest, replicaStatusOf } from '../../src/cloud/kubernetes/pods.ts';
import { base, config, ids, replica, withStatus } from './kubernetes-pod-fixture.ts';

describe('replica status from a pod', () => {
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
});
