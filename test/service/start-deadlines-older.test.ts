/**
 * The start deadline waits for the generation before to stop (its replicas still stopping keep the clock
 * at zero), but for no longer than a start may take: a replica that never stops (on Kubernetes a pod
 * stuck Terminating on a Ready node, which boa never forces) held the new generation's GPUs for ever.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceJob } from '../../src/service/jobs.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { StartDeadlines } from '../../src/service/start-deadlines.ts';

const LIMIT_MS = 900_000;
const STEP_MS = 10_000;
const job = { id: 1, state: 'running', generation: 2 } as ServiceJob;
const spec: DesiredJob = {
  jobId: 1,
  generation: 2,
  replicas: [
    {
      jobId: 1,
      generation: 2,
      rank: 0,
      node: 'node-b',
      gpus: 1,
      workload: { image: 'repo/train:1', command: ['python3', 'train.py'] },
      env: {},
    },
  ],
};
const oldRank0: ReplicaStatus = { jobId: 1, generation: 1, rank: 0, node: 'node-a', phase: 'stopping' };

/** Passes STEP_MS apart from 0 until one finds the generation late; when, and the replica it blames. */
function firstLate(statusesAt: (now: number) => ReplicaStatus[], until: number) {
  const deadlines = new StartDeadlines();
  deadlines.taken([spec], 0);
  for (let now = 0; now <= until; now += STEP_MS) {
    const byJob = new Map([[1, statusesAt(now)]]);
    const late = deadlines.overdue(
      byJob,
      () => job,
      () => spec,
      new Set(),
      now,
      LIMIT_MS,
    );
    if (late.length > 0) return { at: now, reason: late[0]!.replica.reason };
  }
  return undefined;
}

describe('the start deadline of a generation whose predecessor is still stopping', () => {
  it('counts from when the older replica stopped, when it stops within the deadline', () => {
    const stopsAt = LIMIT_MS / 2;
    const late = firstLate((now) => (now < stopsAt ? [oldRank0] : []), 10 * LIMIT_MS);
    expect(late?.at).toBe(stopsAt - STEP_MS + LIMIT_MS);
    expect(late?.reason).toBe(
      'did not start within 900 s (startTimeoutSeconds): no replica was made (the executor log says why)',
    );
  });

  it('runs once the older replica has not stopped within the deadline, naming it, instead of waiting for ever', () => {
    const late = firstLate(() => [oldRank0], 10 * LIMIT_MS);
    // Waited for the deadline, then counted the deadline.
    expect(late?.at).toBe(2 * LIMIT_MS - STEP_MS);
    expect(late?.reason).toBe(
      "did not start within 900 s (startTimeoutSeconds): generation 1's rank 0 on node-a has not stopped (stopping), and the next starts only once it has",
    );
  });

  it("gives the executor's own words for the waiting replica first (Kubernetes names the pod it waits for)", () => {
    const waiting: ReplicaStatus = {
      jobId: 1,
      generation: 2,
      rank: 0,
      node: 'node-b',
      phase: 'starting',
      reason:
        "waiting for the job's older pods to go before its pods are made: boa-job-1-g1-r0 on node node-a",
    };
    const late = firstLate(() => [oldRank0, waiting], 10 * LIMIT_MS);
    expect(late?.reason).toMatch(/within 900 s \(startTimeoutSeconds\): waiting for the job's older pods/);
  });
});
