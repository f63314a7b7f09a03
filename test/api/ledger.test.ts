import { afterEach, describe, expect, it } from 'vitest';
import { pruneOldRows } from '../../src/service/retention.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** Two hours of a service with live cifar10 jobs on its manual clock. */
async function twoHours() {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  cleanups.push(s.close);
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  const jobs = [];
  for (let i = 0; i < 5; i++) jobs.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body);
  for (let t = 0; t < 120; t++) {
    await s.ticks(1);
    for (const job of jobs) await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
  }
  return s;
}

describe('GET /v1/ledger', () => {
  it('splits the time since start into equal buckets whose paid average is the whole span’s', async () => {
    const s = await twoHours();
    const ledger = await s.request('GET', '/v1/ledger?hours=24&points=8');
    expect(ledger.status).toBe(200);
    expect(ledger.body).toMatchObject({ budget: 40, windowHours: 24 });
    const series = ledger.body.series as Array<Record<string, number | string>>;
    expect(series).toHaveLength(8);
    // Contiguous buckets from the first start to now (the service is younger than 24 h).
    for (let i = 1; i < series.length; i++) expect(series[i]?.from).toBe(series[i - 1]?.to);
    const spanHours = (Date.parse(series[7]?.to as string) - Date.parse(series[0]?.from as string)) / 3.6e6;
    expect(spanHours).toBeCloseTo(2, 6);

    const budget = (await s.request('GET', '/v1/budget')).body;
    const mean = series.reduce((sum, p) => sum + (p.paidGpuHoursPerHour as number), 0) / series.length;
    expect(mean).toBeGreaterThan(0);
    expect(mean).toBeCloseTo(budget.window.paidGpuHoursPerHour, 3);
    // The window average at the last point is what GET /v1/budget reports now.
    expect(series[7]?.paidWindowAverage).toBeCloseTo(budget.window.paidGpuHoursPerHour, 4);
    // Paid covers what is allocated (whole nodes, boot time).
    for (const p of series) {
      expect(p.paidGpuHoursPerHour as number).toBeGreaterThanOrEqual(
        (p.allocatedGpuHoursPerHour as number) - 1e-9,
      );
    }
  });

  it('gives exactly `points` buckets, whatever the span divides into', async () => {
    const s = await twoHours();
    const now = s.clock.t;
    const start = Date.parse((await s.request('GET', '/v1/ledger?points=1')).body.series[0].from);
    // 7 buckets of 2 hours: the bucket edges summed in floating point used to end a hair before now,
    // and an 8th bucket a hundredth of a millisecond long followed.
    for (let points = 1; points <= 40; points++) {
      const series = (await s.request('GET', `/v1/ledger?hours=24&points=${points}`)).body.series as Array<{
        from: string;
        to: string;
      }>;
      expect(series, `points=${points}`).toHaveLength(points);
      expect(Date.parse(series[0]!.from)).toBe(start);
      expect(Date.parse(series[points - 1]!.to)).toBe(now);
      for (const p of series) {
        expect(Date.parse(p.to) - Date.parse(p.from)).toBeCloseTo((now - start) / points, -1);
      }
    }
  });

  it('never reports time whose rows retention has pruned as time nothing was paid', async () => {
    const s = await startService();
    cleanups.push(s.close);
    const HOUR = 3_600_000;
    // One node of 4 GPUs paid throughout four days, replaced by another each day.
    for (let day = 0; day < 4; day++) {
      s.repo.ledger.observeNodes([{ id: `n-${day}`, gpus: 4, launchedAt: s.clock.t }], s.clock.t);
      s.clock.t += 24 * HOUR;
    }
    s.repo.ledger.observeNodes([{ id: 'n-4', gpus: 4, launchedAt: s.clock.t }], s.clock.t);
    // Rows older than the longest window plus a day (48 hours) go: the first two days' nodes.
    expect(pruneOldRows(s.service)).toBeGreaterThan(0);
    const { series } = (await s.request('GET', '/v1/ledger?hours=96&points=8')).body as {
      series: Array<{ from: string; paidGpuHoursPerHour: number; paidWindowAverage: number }>;
    };
    expect(series.length).toBeGreaterThan(0);
    for (const p of series) {
      expect(Date.parse(p.from)).toBeGreaterThanOrEqual(s.clock.t - 48 * HOUR);
      expect(p.paidGpuHoursPerHour).toBeCloseTo(4, 6);
      expect(p.paidWindowAverage).toBeCloseTo(4, 6);
    }
  });

  it('needs the operator token and refuses bad bounds, naming the field', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('GET', '/v1/ledger', undefined, null)).status).toBe(401);
    const bad = await s.request('GET', '/v1/ledger?points=0');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('points');
  });
});

describe('GET /v1/resizes', () => {
  it('lists the latest resizes newest first, the first being the status view’s last resize', async () => {
    const s = await twoHours();
    const { resizes } = (await s.request('GET', '/v1/resizes?limit=3')).body;
    expect(resizes.length).toBeGreaterThan(0);
    expect(resizes.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < resizes.length; i++) expect(resizes[i].at <= resizes[i - 1].at).toBe(true);
    const last = (await s.request('GET', '/v1/status')).body.nodeGroup.lastResize;
    expect(resizes[0]).toMatchObject({ target: last.target, status: last.status, at: last.at });
  });
});
