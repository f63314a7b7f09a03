/**
 * A job boa stops before the executor has answered about its replicas (its answers fail, or the pass that
 * started them had not answered yet) still holds its GPUs: they go to no other job until an answer of a
 * pass started after the stop says whether its replicas still run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { graceService } from './grace-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const oneNode = () => graceService(cleanups, { maxNodes: 1 });

describe('GPUs of a job stopped before the executor answered about it', () => {
  it('go to no other job until an answer says its replicas ended', async () => {
    const { s, executor, tick, submit, view } = await oneNode();
    const a = await submit();
    // The executor starts a's replica, but no answer of it comes through.
    executor.failing = true;
    for (let i = 0; i < 6 && executor.nodesOf(a).length === 0; i++) await tick();
    expect(executor.nodesOf(a)).toHaveLength(1);
    expect(s.service.job(a).state).toBe('running');
    expect(s.service.state.liveReplicas.some((r) => r.jobId === a)).toBe(false);
    expect((await s.request('POST', `/v1/jobs/${a}/cancel`)).status).toBe(200);
    const b = await submit();
    await tick();
    const heldFrom = s.clock.now();
    let seen = await view(b);
    expect(seen.state).toBe('waiting');
    expect(seen.allocation ?? []).toEqual([]);
    expect(seen.waitingFor).toBe('stopping');
    // Not stopped as far as boa knows: SIGKILL's time is not known.
    expect(seen.heldBy).toEqual({ jobs: [a], killAt: null });
    expect(s.service.state.allocatedGpus).toBe(0);
    await tick();
    expect((await view(b)).state).toBe('waiting');
    for (const sample of s.service.deps.repo.ledger.allocationSince(heldFrom - 1))
      expect(sample.gpus).toBe(0);

    // Answers come again: a's replica is listed stopping, with its SIGKILL time.
    executor.failing = false;
    s.service.execution.reconcile();
    await s.service.execution.settle();
    await tick();
    seen = await view(b);
    expect(seen.state).toBe('waiting');
    expect(seen.heldBy.jobs).toEqual([a]);
    expect(Number.isFinite(Date.parse(seen.heldBy.killAt))).toBe(true);

    executor.end(a);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    await tick();
    expect((await view(b)).state).toBe('running');
    expect(s.service.state.allocatedGpus).toBeGreaterThan(0);
  });
});
