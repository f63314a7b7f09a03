import { UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { poolOnEmulatedGroup } from './aws-pool.ts';
import { ManualClock } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** The service over the real EKS/EC2 adapter, its SDK clients mocked as an EKS node group. */
async function serviceOnEks(maxSize: number) {
  const clock = new ManualClock();
  const group = emulateNodegroup({ clock, minSize: 0, maxSize, bootMs: 90_000, updatePolls: 0 });
  const config = resolveConfig({
    cloud: 'aws',
    dataDir: ':memory:',
    token: 'operator-token-0123456789',
    priorRates: { cifar10: 8 },
    aws: { clusterName: 'boa', nodegroupName: 'gpu', region: 'us-east-1' },
  });
  const logger = pino({ level: 'silent' });
  const pool = poolOnEmulatedGroup(config, logger, group, clock);
  const boa = await bootService(config, {
    clock,
    pool,
    computer: new InlinePlanComputer(),
    logger,
    dataDir: ':memory:',
  });
  cleanups.push(boa.close);
  const tick = async () => {
    await boa.scheduler.tick();
    await boa.scheduler.settle();
    clock.advance(60);
  };
  return { boa, group, tick };
}

const desiredSizes = (group: ReturnType<typeof emulateNodegroup>) =>
  group.eksMock
    .commandCalls(UpdateNodegroupConfigCommand)
    .map((c) => c.args[0].input.scalingConfig?.desiredSize);

describe('service on an EKS node group', () => {
  it('scales the group up for a job, runs it on the launched instances, and scales down after', async () => {
    const { boa, group, tick } = await serviceOnEks(10);
    boa.service.setBudget(30);
    await boa.service.planner.idle();
    const { job } = boa.service.registerJob('cifar10', 'j');
    const width = job.widths?.[0] as number;
    await tick();
    expect(desiredSizes(group)).toEqual([Math.ceil(width / 4)]);
    await tick();
    await tick(); // the instances finished booting
    expect(boa.service.job(job.id).allocation).toHaveLength(width);
    expect(new Set(boa.service.job(job.id).allocation)).toEqual(new Set(group.instances.map((i) => i.id)));
    const launched = group.instances.map((i) => i.id);
    boa.service.finishJob(job.id, 'done');
    await tick();
    await tick();
    // Scaled in by terminating the (now idle) instances boa chose, never by lowering desiredSize.
    expect(desiredSizes(group)).toEqual([Math.ceil(width / 4)]);
    expect(group.terminations.map((t) => t.instanceId).sort()).toEqual(launched.sort());
    expect(group.terminations.every((t) => t.decrement)).toBe(true);
    expect(group.group.desiredSize).toBe(0);
  });

  it('never asks the group for more than its maximum', async () => {
    const { boa, group, tick } = await serviceOnEks(1);
    boa.service.setBudget(200);
    await boa.service.planner.idle();
    for (let i = 0; i < 5; i++) boa.service.registerJob('cifar10', `j${i}`);
    await tick();
    await tick();
    expect(desiredSizes(group)).toEqual([1]);
    expect(group.group.desiredSize).toBe(1);
  });
});
