/**
 * The clock stepped back (NTP, a VM restored): the ledger's samples already reach past the new time, so
 * the allocation interval left open must not start before their end. It did (flushAllocation moved
 * `allocatedFrom` back to the tick's time), and every average that adds the open interval to the samples
 * (the window's allocated average behind the plan's paid/allocated correction, GET /v1/budget, the split
 * by class) counted the GPUs of the stretch between the tick and the last sample's end twice.
 */
import { describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

describe('the allocation interval after the clock steps back', () => {
  it('never reaches back over the samples: averages count each GPU-millisecond once', async () => {
    const boa = await startService({
      config: {
        tickSeconds: 60,
        local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
        budget: 40,
        priorRates: { cifar10: 2 },
      },
    });
    try {
      const { service, repo } = boa;
      await service.planner.idle();
      service.registerJob('cifar10', 'one');
      await boa.ticks(10);
      const gpus = service.state.allocatedGpus;
      expect(gpus).toBeGreaterThan(0);
      const cursor = repo.ledger.lastAllocationTo() as number;
      const start = cursor - 3_600_000;
      // Booked GPU-milliseconds over [start, to] by the averages (samples and the open interval).
      const averaged = (to: number) =>
        service.ledgerAverages(start, to).allocatedGpuHoursPerHour * (to - start);
      const sampled = (to: number) => repo.ledger.ledgerTotals(start, to).allocatedGpuMs;

      boa.clock.t = cursor - 300_000; // five minutes back
      await boa.ticks(1); // a tick at the stepped-back time, and a minute on
      let now = boa.clock.now();
      expect(now).toBeLessThan(cursor);
      // The samples cover [start, now] whole: the open interval adds nothing to them.
      expect(averaged(now)).toBeCloseTo(sampled(now), 3);
      expect(service.state.allocatedFrom).toBeGreaterThanOrEqual(cursor);

      // Past the last sample's end, the ledger resumes there: no gap and no overlap.
      await boa.ticks(6);
      now = boa.clock.now();
      expect(now).toBeGreaterThan(cursor);
      const samples = repo.ledger.allocationSince(start);
      for (let i = 1; i < samples.length; i++) expect(samples[i]!.from).toBe(samples[i - 1]!.to);
      const open = service.state.allocatedGpus * (now - service.state.allocatedFrom);
      expect(averaged(now)).toBeCloseTo(sampled(now) + open, 3);
    } finally {
      await boa.close();
    }
  });
});
