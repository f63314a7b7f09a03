/**
 * What a replica on a node gone silent meant for its job before its pod was read as it was: the pod in
 * phase Unknown read as starting, so the start deadline (startTimeoutSeconds) ran again for a
 * generation that had been running, and failed it (a restart counted, a backoff) as a start that never
 * came, while the job may still have been training on that node. The executor's status of the pod is
 * fed to the service's start deadlines as execution.ts does.
 */
import { expect, it } from 'vitest';
import { replicaStatusOf } from '../../src/cloud/kubernetes/pods.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { StartDeadlines } from '../../src/service/start-deadlines.ts';
import { ids, replica, withStatus } from './kubernetes-pod-fixture.ts';

const LIMIT_MS = 900_000;
const desired: DesiredJob = { jobId: ids.jobId, generation: ids.generation, replicas: [replica] };
const job = { id: ids.jobId, state: 'running', generation: ids.generation } as ServiceJob;
const running = { startedAt: new Date('2026-12-01T09:00:00Z') };

/** Passes from `start`, a second apart, each reporting `status`; the deadlines' verdicts. */
function passes(deadlines: StartDeadlines, status: ReplicaStatus, start: number, seconds: number) {
  const late = [];
  for (let t = start; t <= start + seconds * 1000; t += 1000) {
    deadlines.taken([desired], t);
    const byJob = new Map([[ids.jobId, [status]]]);
    late.push(
      ...deadlines.overdue(
        byJob,
        () => job,
        () => desired,
        new Set(),
        t,
        LIMIT_MS,
      ),
    );
  }
  return late;
}

it('a running replica whose pod went to phase Unknown does not fail its job at the start deadline', () => {
  const deadlines = new StartDeadlines();
  const up = replicaStatusOf(
    withStatus({
      phase: 'Running',
      containerStatuses: [
        { name: 'train', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running } },
      ],
    }),
  )!;
  expect(passes(deadlines, up, 0, 5)).toEqual([]);
  const silent = replicaStatusOf(
    withStatus({
      phase: 'Unknown',
      containerStatuses: [
        { name: 'train', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running } },
      ],
    }),
  )!;
  // Before the fix: phase 'starting', and 900 s on the generation failed with "did not start within 900 s".
  expect(passes(deadlines, silent, 10_000, LIMIT_MS / 1000 + 60)).toEqual([]);
  expect(silent.phase).toBe('running');
});
