/**
 * The opt-in demand ratio in the service (src/service/demand.ts): each allocation sample keeps what the
 * plan in force expected of it, and a plan is made with the budget divided by allocated over expected,
 * rebuilt from the samples, so a restart reads the same ratio.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demandRatioNow } from '../../src/service/demand.ts';
import { ManualClock, startService } from './harness.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;

describe('the demand ratio in the service', () => {
  it('refuses a negative half-life, naming the setting', async () => {
    await expect(startService({ config: { demandHalfLifeHours: -1 } })).rejects.toThrow(
      /demandHalfLifeHours must be >= 0 \(0: no demand ratio\)/,
    );
  });

  it("is off by default: a plan's budget is not divided by it", async () => {
    const boa = await startService();
    try {
      boa.service.setBudget(40);
      const now = boa.clock.now();
      boa.repo.ledger.recordAllocation(now, now + HOUR, 80, 40);
      boa.clock.advance(3600);
      expect(demandRatioNow(boa.service, boa.clock.now())).toBe(1);
    } finally {
      await boa.close();
    }
  });

  it('narrows the next plan when the plans allocated more than they expected, and reads the same after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-demand-'));
    dirs.push(dataDir);
    const clock = new ManualClock();
    // Without the plan cap (a default), which would hold the plan down and hide the ratio's narrowing.
    const config = { demandHalfLifeHours: 2, planCapMultiple: 0 };
    const first = await startService({ dataDir, clock, config });
    let ratio: number;
    let planned: number;
    try {
      first.service.setBudget(40);
      await first.service.planner.idle();
      const before = first.service.planInputs()!;
      expect(before.demandRatio).toBe(1);
      // Three hours at twice what the plans expected.
      const start = clock.now();
      for (let h = 0; h < 3; h++)
        first.repo.ledger.recordAllocation(start + h * HOUR, start + (h + 1) * HOUR, 60, 30);
      clock.advance(3 * 3600);
      ratio = demandRatioNow(first.service, clock.now());
      // The prior (an hour at 1) decays; three hours at 2 dominate.
      expect(ratio).toBeGreaterThan(1.6);
      expect(ratio).toBeLessThan(2);
      const after = first.service.planInputs()!;
      expect(after.demandRatio).toBe(ratio);
      planned = after.planningBudget;
      expect(planned).toBeLessThan(before.planningBudget / 1.5);
    } finally {
      await first.close();
    }
    const second = await startService({ dataDir, clock, config });
    try {
      expect(demandRatioNow(second.service, clock.now())).toBe(ratio);
      expect(second.service.planInputs()!.planningBudget).toBe(planned);
    } finally {
      await second.close();
    }
  });

  it("records what the plan in force expected with each tick's allocation sample", async () => {
    const boa = await startService({
      config: { demandHalfLifeHours: 2, planCapMultiple: 0, local: { bootSeconds: 0 } },
    });
    try {
      boa.service.setBudget(40);
      await boa.service.planner.idle();
      boa.service.registerJob('cifar10', 'a');
      await boa.ticks(3);
      const row = boa.service.state.plan!.row;
      const samples = boa.repo.ledger.allocationSince(0);
      expect(samples.length).toBeGreaterThan(0);
      const last = samples.at(-1)!;
      expect(last.gpus).toBeGreaterThan(0);
      // One job on a plan for the expected load: it allocates less than the plan expects, so the
      // plan's own expectation is recorded (no anti-windup unless the plan is at its minimum).
      const atMinimum = row.planningBudget <= row.minFeasibleBudget * (1 + 1e-9);
      expect(last.expectedGpus).toBe(
        atMinimum ? Math.max(last.gpus, row.predictedGpuHoursPerHour) : row.predictedGpuHoursPerHour,
      );
    } finally {
      await boa.close();
    }
  });

  it('keeps the expectation for the sample that spans a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-demand-restart-'));
    dirs.push(dataDir);
    const clock = new ManualClock();
    const config = {
      tickSeconds: 60,
      local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
      budget: 40,
      priorRates: { cifar10: 2 },
      demandHalfLifeHours: 2,
    };
    let boa = await startService({ dataDir, clock, config });
    await boa.service.planner.idle();
    boa.service.registerJob('cifar10', 'a');
    await boa.ticks(5);
    await boa.close();
    // Ten minutes down, the job still running: the first tick after the restart records them.
    clock.advance(600);
    boa = await startService({ dataDir, clock, config });
    try {
      await boa.ticks(2);
      const samples = boa.repo.ledger.allocationSince(0);
      const acrossRestart = samples.find((sample) => sample.to - sample.from >= 600_000);
      expect(acrossRestart).toBeDefined();
      expect(acrossRestart!.expectedGpus).not.toBeNull();
      // Once a plan is in force, no sample lacks its expectation (those before the first plan do).
      const planned = samples.findIndex((sample) => sample.expectedGpus !== null);
      expect(samples.slice(planned).every((sample) => sample.expectedGpus !== null)).toBe(true);
    } finally {
      await boa.close();
    }
  });
});
