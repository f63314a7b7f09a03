/**
 * A lease that expires in a tick whose store write then fails (SQLITE_FULL, an I/O error) is one job's
 * step: logged, retried at the next tick, and the tick goes on. Thrown, it came after the tick's commit
 * and skipped the rest of the tick (the other silent jobs, the executor's reconcile, the re-plan and the
 * metrics), and the tick counted as failed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('a lease expiry whose store write fails', () => {
  it('loses the other silent jobs in the same tick, fails no tick, and loses the first at the next', async () => {
    const s = await startService({
      config: {
        leaseSeconds: 300,
        priorRates: { bert: 1 },
        local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
      },
    });
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await s.service.planner.idle();
    const first = (await s.request('POST', '/v1/jobs', { class: 'bert' })).body as { id: number };
    const second = (await s.request('POST', '/v1/jobs', { class: 'bert' })).body as { id: number };
    for (let i = 0; i < 4 && s.service.job(second.id).state !== 'running'; i++) await s.ticks(1);
    expect([s.service.job(first.id).state, s.service.job(second.id).state]).toEqual(['running', 'running']);

    // Silent from here: tick until the next tick finds both leases expired, then fail the first write.
    const silentFor = (id: number) => s.clock.now() - s.service.leases.lastSeen(s.service.job(id));
    while (Math.min(silentFor(first.id), silentFor(second.id)) <= 300_000) await s.ticks(1);
    failOnce(s.repo, 'saveJobState');
    const failures = s.service.state.counters.tickFailures;
    await s.ticks(1);
    expect(s.service.state.counters.tickFailures).toBe(failures);
    expect(s.service.job(first.id).state).toBe('running');
    expect(s.service.job(second.id).state).toBe('lost');

    await s.ticks(1);
    expect(s.service.job(first.id).state).toBe('lost');
    expect(s.repo.getJob(first.id)?.state).toBe('lost');
  });
});
