import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { READMIT_EVERY_MS, Readmissions, STUCK_TERMINATING_MS } from '../../src/cloud/kubernetes/readmit.ts';
import type { ReplicaStatus } from '../../src/service/ports.ts';

const T = Date.parse('2026-11-27T06:00:00Z');

/** Another job's pod, deleted by boa: its grace period ends at T. */
const stopping: V1Pod = {
  metadata: { name: 'boa-job-1-g1-r0', deletionTimestamp: new Date(T) },
  spec: { nodeName: 'n1', containers: [] },
  status: { phase: 'Running' },
};
/** The pod its node turned away while the GPUs were still held. */
const turnedAway: V1Pod = {
  metadata: { name: 'boa-job-2-g1-r0' },
  spec: { nodeName: 'n1', containers: [] },
  status: { phase: 'Failed', reason: 'OutOfnvidia.com/gpu', message: 'no room' },
};
const starting: ReplicaStatus = {
  jobId: 2,
  generation: 1,
  rank: 0,
  node: 'n1',
  phase: 'starting',
  reason: 'not admitted by its node yet: no room',
};

describe('readmission of pods their node turned away', () => {
  it('waits while another pod of boa stops on the node, but not on one stuck terminating for good', () => {
    const r = new Readmissions();
    const pods = [stopping, turnedAway];
    // Within the grace period and a while after it: the refusal is explained, nothing is removed.
    for (const at of [T - 60_000, T, T + STUCK_TERMINATING_MS]) {
      expect(r.toRemove(pods, [turnedAway], at)).toEqual([]);
    }
    expect(r.status(turnedAway, starting)).toBe(starting);
    // Stuck past that: the refusals count, at most every 10 s, and the fourth fails the replica.
    let at = T + STUCK_TERMINATING_MS + 1;
    for (let i = 0; i < 3; i++) {
      expect(r.toRemove(pods, [turnedAway], at)).toEqual([turnedAway]);
      expect(r.toRemove(pods, [turnedAway], at + 1_000)).toEqual([]);
      at += READMIT_EVERY_MS;
    }
    expect(r.toRemove(pods, [turnedAway], at)).toEqual([]);
    expect(r.status(turnedAway, starting)).toMatchObject({
      phase: 'failed',
      reason: expect.stringMatching(/turned away 4 times .*gpusPerNode/),
    });
  });
});
