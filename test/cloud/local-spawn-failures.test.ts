import { describe, expect, it } from 'vitest';
import { LOST_START_WAIT_MS, SPAWN_ATTEMPTS, SpawnFailures } from '../../src/cloud/local/spawn-failures.ts';
import type { ReplicaSpec } from '../../src/service/ports.ts';

const spec: ReplicaSpec = {
  jobId: 1,
  generation: 1,
  rank: 0,
  node: 'local-1',
  gpus: 1,
  workload: { command: ['true'] },
  env: {},
};

describe('SpawnFailures', () => {
  it('holds a lost start back for LOST_START_WAIT_MS, a failure the launcher answered not at all', () => {
    let now = 1_000;
    const failures = new SpawnFailures(() => now);
    failures.failed(spec, 'spawn EAGAIN');
    expect(failures.awaitingRecord(spec)).toBe(false);
    failures.failed(spec, 'replica launcher ended: SIGKILL', true);
    expect(failures.awaitingRecord(spec)).toBe(true);
    now += LOST_START_WAIT_MS - 1;
    expect(failures.awaitingRecord(spec)).toBe(true);
    now += 1;
    expect(failures.awaitingRecord(spec)).toBe(false);
    // Each counts toward giving up, lost or not.
    expect(failures.failed(spec, 'spawn EAGAIN')).toBe(SPAWN_ATTEMPTS);
    expect(failures.givenUp(spec)).toBe(true);
    failures.started(spec);
    expect(failures.awaitingRecord(spec)).toBe(false);
    expect(failures.givenUp(spec)).toBe(false);
  });

  it('lists the lost starts nothing adopts: a given-up one while desired, one no longer desired for the wait', () => {
    let now = 1_000;
    const failures = new SpawnFailures(() => now);
    const other = { ...spec, rank: 1 };
    failures.failed(spec, 'spawn EAGAIN');
    failures.failed(spec, 'spawn EAGAIN');
    failures.failed(other, 'replica launcher ended: SIGKILL', true);
    expect(failures.unadopted(), 'a desired one still waiting is adopted by its next launch').toEqual([]);
    failures.failed(spec, 'replica launcher ended: SIGKILL', true);
    expect(failures.givenUp(spec)).toBe(true);
    expect(failures.unadopted()).toEqual([spec]);
    // No longer desired: looked for until LOST_START_WAIT_MS after its loss.
    failures.retain([spec]);
    expect(failures.unadopted()).toEqual([spec, other]);
    failures.settled(spec);
    expect(failures.unadopted(), 'found once').toEqual([other]);
    expect(failures.givenUp(spec), 'still failed').toBe(true);
    now += LOST_START_WAIT_MS;
    expect(failures.unadopted()).toEqual([]);
  });
});
