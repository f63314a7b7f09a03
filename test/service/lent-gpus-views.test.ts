/**
 * One meaning of "allocated": the plan's GPUs, as the ledger and CloudWatch book them. GPUs the idle
 * fill lends a job on its node's idle GPUs are shown apart as lent (found in review: one deepspeech2 job
 * of plan width 1 widened to its node's 4 read 4 allocated in /v1/status and boa_gpus, 1 in CloudWatch
 * and the ledger, and no job field said why it ran on 4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';
import type { MetricDatum } from '../../src/service/ports.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function run(idleFill: boolean) {
  const s = await startService({
    config: {
      idleFill,
      priorRates: { deepspeech2: 2 },
      leaseSeconds: 86_400,
      local: { maxNodes: 1, bootSeconds: 90, releaseSeconds: 30 },
    },
  });
  cleanups.push(s.close);
  let published: readonly MetricDatum[] = [];
  (s.service.deps as { metrics: unknown }).metrics = {
    put: async (m: readonly MetricDatum[]) => {
      published = m;
    },
  };
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  const id = (await s.request('POST', '/v1/jobs', { class: 'deepspeech2' })).body.id as number;
  await s.ticks(10);
  const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
  const listed = (await s.request('GET', '/v1/jobs')).body.jobs[0];
  const status = (await s.request('GET', '/v1/status')).body;
  const metrics = (await s.request('GET', '/metrics')).body as string;
  const gauge = (kind: string) =>
    Number(new RegExp(`^boa_gpus\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
  const cw = Object.fromEntries(published.map((m) => [m.name, m.value]));
  const samples = s.service.deps.repo.ledger.allocationSince(0).filter((x) => x.to > x.from);
  return {
    width: job.width,
    planned: job.widths[job.statEpoch],
    lentGpus: job.lentGpus,
    listedLentGpus: listed.lentGpus,
    status: status.gpus,
    prom: { allocated: gauge('allocated'), lent: gauge('lent'), paid: gauge('paid') },
    cloudWatchAllocated: cw.AllocatedGpuHoursPerHour,
    lastLedgerSample: samples.at(-1)?.gpus,
  };
}

describe('GPUs allocated and lent now', () => {
  it('count the idle fill apart from the plan, as the ledger and CloudWatch do', async () => {
    const on = await run(true);
    // The job runs on its node's 4 GPUs, its plan's 1 and 3 lent.
    expect([on.width, on.planned]).toEqual([4, 1]);
    expect(on.status).toEqual({ allocated: 1, lent: 3, paid: 4 });
    expect(on.prom).toEqual({ allocated: 1, lent: 3, paid: 4 });
    expect([on.lentGpus, on.listedLentGpus]).toEqual([3, 3]);
    expect([on.cloudWatchAllocated, on.lastLedgerSample]).toEqual([1, 1]);
  });

  it('read the plan alone with the fill off', async () => {
    const off = await run(false);
    expect([off.width, off.planned]).toEqual([1, 1]);
    expect(off.status).toEqual({ allocated: 1, lent: 0, paid: 4 });
    expect(off.prom).toEqual({ allocated: 1, lent: 0, paid: 4 });
    expect(off.lentGpus).toBe(0);
    expect([off.cloudWatchAllocated, off.lastLedgerSample]).toEqual([1, 1]);
  });
});
