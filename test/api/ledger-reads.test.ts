/**
 * `GET /v1/ledger` reads the ledger's rows once, not once per bucket: each of its 500 buckets and their
 * window averages read through SQL every sample from its start on, and 72 hours of 10 s ticks held the
 * service for 1.7 s a request (ticks and job polls waiting behind it; found in review). Its figures are
 * those of the per-span reads (GET /v1/budget's).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from '../service/harness.ts';

let boa: Awaited<ReturnType<typeof startService>> | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const HOUR = 3_600_000;
const round = (value: number) => Number(value.toFixed(4));

describe('GET /v1/ledger', () => {
  it('reads the ledger once, whatever the points, and gives each span what a read of it gives', async () => {
    const s = (boa = await startService({ config: { priorRates: { cifar10: 6 } } }));
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body);
    for (let t = 0; t < 90; t++) {
      await s.ticks(1);
      for (const job of jobs) await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
      // Jobs end along the way: nodes go, and the allocation falls.
      if (t === 40) await s.request('POST', `/v1/jobs/${jobs[0].id}/complete`, undefined, jobs[0].token);
      if (t === 60) await s.request('POST', `/v1/jobs/${jobs[1].id}/cancel`);
    }
    // Mid-tick: the open allocation interval counts too.
    s.clock.t += 17_000;

    const perSpan = vi.spyOn(s.repo.ledger, 'ledgerTotals');
    const ledger = await s.request('GET', '/v1/ledger?hours=24&points=500');
    expect(perSpan).not.toHaveBeenCalled();
    perSpan.mockRestore();

    expect(ledger.status).toBe(200);
    const series = ledger.body.series as Array<Record<string, string | number>>;
    expect(series.length).toBeGreaterThan(100);
    const first = Date.parse(series[0]!.from as string);
    let paidSeen = 0;
    for (const point of series) {
      const from = Date.parse(point.from as string);
      const to = Date.parse(point.to as string);
      const bucket = s.service.ledgerAverages(from, to);
      const window = s.service.ledgerAverages(Math.max(to - 24 * HOUR, first), to);
      // Within the rounding of the bucket edges to whole milliseconds in the answer.
      expect(point.paidGpuHoursPerHour).toBeCloseTo(round(bucket.paidGpuHoursPerHour), 2);
      expect(point.allocatedGpuHoursPerHour).toBeCloseTo(round(bucket.allocatedGpuHoursPerHour), 2);
      expect(point.paidWindowAverage).toBeCloseTo(round(window.paidGpuHoursPerHour), 3);
      paidSeen = Math.max(paidSeen, point.paidGpuHoursPerHour as number);
    }
    expect(paidSeen).toBeGreaterThan(0);
  }, 120_000);
});
