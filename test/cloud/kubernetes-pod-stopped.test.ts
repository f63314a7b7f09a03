/** A pod stopped by someone else is read as interrupted, never as succeeded. */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { replicaStatusOf } from '../../src/cloud/kubernetes/pods.ts';
import { base, ids, withStatus } from './kubernetes-pod-fixture.ts';

describe('replica status from a pod', () => {
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
});
