/** A replica's status read from its pod: phases, exit codes, a kubelet's refusal; pods not boa's. */
import { describe, expect, it } from 'vitest';
import { replicaStatusOf } from '../../src/cloud/kubernetes/pods.ts';
import { DELETION, ids, withStatus } from './kubernetes-pod-fixture.ts';

describe('replica status from a pod', () => {
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

  it('ignores pods without boa labels', () => {
    expect(replicaStatusOf({ metadata: { name: 'x', labels: { app: 'other' } } })).toBeUndefined();
  });
});
