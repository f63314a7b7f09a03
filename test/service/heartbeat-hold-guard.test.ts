import { DescribeNodegroupCommand, EKS, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { periodFor, runGuard } from '../../infra/budget-guard/index.mjs';
import {
  GUARD_BUDGET_BUCKET_MS,
  GUARD_BUDGET_LOOKBACK_MS,
  HeartbeatHold,
} from '../../src/service/heartbeat-hold.ts';
import { fakeCloudWatch } from '../cloud/fake-cloudwatch.ts';

// boa's heartbeat hold against the guard's own code (infra/budget-guard/index.mjs) over a CloudWatch that
// buckets what boa published: while boa holds, the guard must find the group within what it would set.
const GPUS_PER_NODE = 8;
const GUARD_MINUTES = 15;
const T0 = Date.parse('2026-11-01T12:00:00Z');
const MINUTE = 60_000;

function hold(deployBudget: number) {
  const settings = new Map<string, unknown>();
  const repo = {
    getSetting: <T>(key: string) => settings.get(key) as T | undefined,
    putSetting: (key: string, value: unknown) => void settings.set(key, value),
  };
  return new HeartbeatHold(
    { guardMinutes: GUARD_MINUTES, deployBudget },
    repo,
    T0,
    pino({ level: 'silent' }),
  );
}

/** One guard run at `at` against a node group whose desired size is `desiredSize`. */
async function guardRun(
  cloudwatch: ReturnType<typeof fakeCloudWatch>['cloudwatch'],
  at: number,
  desiredSize: number,
) {
  const eks = new EKS({ region: 'us-east-1' });
  const eksMock = mockClient(eks);
  eksMock.on(DescribeNodegroupCommand).resolves({
    nodegroup: { scalingConfig: { minSize: 0, maxSize: 64, desiredSize } },
  });
  eksMock.on(UpdateNodegroupConfigCommand).resolves({ update: { id: 'u' } });
  const settings = {
    clusterName: 'boa',
    nodegroupName: 'gpu',
    gpusPerNode: GPUS_PER_NODE,
    guardMinutes: GUARD_MINUTES,
  };
  return runGuard({ eks, cloudwatch }, { ...settings, budget: 64 }, new Date(at));
}

describe("the heartbeat hold sizes the group as the guard's code does", () => {
  it("assumes the guard's budget buckets: the period of its 24-hour read", () => {
    const now = T0 + 17_345;
    expect(periodFor(new Date(now - GUARD_BUDGET_LOOKBACK_MS), new Date(now)) * 1000).toBe(
      GUARD_BUDGET_BUCKET_MS,
    );
  });

  for (const align of ['start', 'epoch'] as const) {
    it(`holds to the lower budget after a raise shortly before the metrics stop getting through (buckets: ${align})`, async () => {
      // Ticks every 10 s at budget 16, the last delivered at 12:31:20; raised to 32 from 10 s to 110 s
      // before it. The guard's newest bucket may hold the 16 as well as the 32: it reads 16, 2 nodes.
      for (let raisedBefore = 10_000; raisedBefore <= 110_000; raisedBefore += 20_000) {
        const cw = fakeCloudWatch(align);
        const boa = hold(64);
        const lastDelivered = T0 + 31 * MINUTE + 20_000;
        for (let at = T0; at <= lastDelivered; at += 10_000) {
          const budget = at >= lastDelivered - raisedBefore ? 32 : 16;
          cw.publish('Heartbeat', at, 1);
          cw.publish('BudgetGpuHoursPerHour', at, budget);
          boa.delivered(at, budget);
        }
        for (let run = T0 + 35 * MINUTE; run <= T0 + 60 * MINUTE; run += 5 * MINUTE) {
          // boa (its budget now 32) wants 6 nodes and asks for as many as its hold lets it.
          const held = boa.nodes(run, 32, GPUS_PER_NODE, 0);
          const result = await guardRun(cw.cloudwatch, run, Math.min(held, 6));
          const when = `raised ${raisedBefore / 1000} s before, guard at ${new Date(run).toISOString()}`;
          expect(result.action, when).not.toBe('shrink');
          if (run >= T0 + 47 * MINUTE) expect(held, when).toBeLessThanOrEqual(2);
        }
      }
    });
  }

  it('keeps the hold after the first delivery past a silence until the guard can read it', async () => {
    // The heartbeat is readable only 90 s after it is sent (an outage ending): a guard run between boa's
    // next tick and then counts no heartbeat.
    const cw = fakeCloudWatch('start', 90_000);
    const boa = hold(16);
    for (let at = T0; at <= T0 + 10 * MINUTE; at += MINUTE) {
      cw.publish('Heartbeat', at, 1);
      cw.publish('BudgetGpuHoursPerHour', at, 16);
      boa.delivered(at, 16);
    }
    const back = T0 + 30 * MINUTE; // 20 minutes undelivered; boa held to 16 / 8 = 2 nodes
    expect(boa.nodes(back, 16, GPUS_PER_NODE, 0)).toBe(2);
    let lifted: number | undefined;
    for (let tick = back; tick <= back + 10 * MINUTE; tick += MINUTE) {
      // boa ticks every minute and wants 4 nodes; every put from `back` on gets through.
      const wants = Math.min(4, boa.nodes(tick, 16, GPUS_PER_NODE, 0));
      if (wants === 4) lifted ??= tick;
      cw.publish('Heartbeat', tick, 1);
      cw.publish('BudgetGpuHoursPerHour', tick, 16);
      boa.delivered(tick, 16);
      for (const offset of [15_000, 45_000]) {
        const result = await guardRun(cw.cloudwatch, tick + offset, wants);
        expect(result.action, `guard ${(tick + offset - back) / 1000} s after the first delivery`).not.toBe(
          'shrink',
        );
      }
    }
    // Bounded: lifted once the first delivery is as old as the hold's lead on the guard (5 minutes here).
    expect(lifted).toBe(back + 5 * MINUTE);
  });
});
