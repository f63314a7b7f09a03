import {
  DescribeNodegroupCommand,
  DescribeUpdateCommand,
  EKSServiceException,
  InvalidParameterException,
  ResourceInUseException,
  ThrottlingException,
} from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { CLUSTER, type EmulatedNodegroupOptions, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

type Setup = Partial<Omit<EmulatedNodegroupOptions, 'clock'>> & {
  hardCap?: number;
  updateWaitMs?: number;
  /** Runs at each of the pool's sleeps: things that happen while it waits. */
  whileSleeping?: (ms: number) => void;
};

function setup({ hardCap, updateWaitMs, whileSleeping, ...group }: Setup = {}) {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 10, desiredSize: 2, ...group });
  const pool = new EksNodePool(
    { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4, hardCap, updateWaitMs },
    {
      eks: ng.eks,
      ec2: ng.ec2,
      clock: time.clock,
      sleep: (ms) => {
        whileSleeping?.(ms);
        return time.sleep(ms);
      },
      random: () => 0.5,
      logger: logs.logger,
    },
  );
  return { time, logs, ng, pool };
}

const throttled = () => new ThrottlingException({ message: 'Rate exceeded', $metadata: {} });
const inUse = () => new ResourceInUseException({ message: 'update in progress', $metadata: {} });

describe('EksNodePool.setDesiredSize', () => {
  it('scales up with desiredSize only and an idempotency token, following the update to Successful', async () => {
    const { ng, pool, logs } = setup({ updatePolls: 2 });
    const result = await pool.setDesiredSize(5);
    expect(result).toEqual({ requested: 5, updateId: 'update-1' });
    const [call] = ng.updateCalls();
    expect(call?.args[0].input).toEqual({
      clusterName: CLUSTER,
      nodegroupName: NODEGROUP,
      scalingConfig: { desiredSize: 5 },
      clientRequestToken: expect.stringMatching(/^boa-[0-9a-f]{40}$/),
    });
    // Two InProgress answers, then Successful.
    expect(ng.eksMock.commandCalls(DescribeUpdateCommand)).toHaveLength(3);
    expect(ng.group.desiredSize).toBe(5);
    expect(logs.events()).toEqual(
      expect.arrayContaining(['resize.requested', 'resize.issued', 'resize.succeeded']),
    );
  });

  it('scales down the same way', async () => {
    const { ng, pool } = setup({ desiredSize: 6 });
    expect(await pool.setDesiredSize(1)).toMatchObject({ requested: 1 });
    expect(ng.updateCalls()[0]?.args[0].input.scalingConfig).toEqual({ desiredSize: 1 });
    expect(await pool.listNodes()).toHaveLength(1);
  });

  it('clamps to the group bounds read from DescribeNodegroup, and logs why', async () => {
    const { ng, pool, logs } = setup({ minSize: 2, maxSize: 6, desiredSize: 3 });
    expect(await pool.setDesiredSize(40)).toMatchObject({ requested: 6 });
    expect(await pool.setDesiredSize(0)).toMatchObject({ requested: 2 });
    expect(ng.updateCalls().map((c) => c.args[0].input.scalingConfig?.desiredSize)).toEqual([6, 2]);
    const clamped = logs.lines.filter((l) => l.event === 'resize.clamped');
    expect(clamped.map((l) => [l.target, l.requested, l.clampedBy])).toEqual([
      [40, 6, 'maxSize'],
      [0, 2, 'minSize'],
    ]);
  });

  it('clamps to the hard cap below maxSize, but never below minSize', async () => {
    const capped = setup({ minSize: 0, maxSize: 10, desiredSize: 0, hardCap: 3 });
    expect(await capped.pool.setDesiredSize(8)).toMatchObject({ requested: 3 });
    const belowMin = setup({ minSize: 2, maxSize: 10, desiredSize: 4, hardCap: 1 });
    expect(await belowMin.pool.setDesiredSize(8)).toMatchObject({ requested: 2 });
    expect(belowMin.ng.group.desiredSize).toBe(2);
  });

  it('makes no update when the clamped target is already the desired size', async () => {
    const { ng, pool, logs } = setup({ maxSize: 4, desiredSize: 4 });
    expect(await pool.setDesiredSize(9)).toEqual({ requested: 4 });
    expect(ng.updateCalls()).toHaveLength(0);
    expect(logs.lines.find((l) => l.event === 'resize.skipped')).toMatchObject({ reason: 'unchanged' });
  });

  it('waits out ResourceInUseException, re-reading the bounds before each try', async () => {
    // While boa waits, whoever holds the group lowers maxSize: the retry must respect the new bound.
    const { ng, pool, logs, time } = setup({ maxSize: 10, whileSleeping: () => ng.setBounds(0, 7) });
    ng.failNext('UpdateNodegroupConfig', [inUse(), inUse()]);
    expect(await pool.setDesiredSize(9)).toMatchObject({ requested: 7 });
    const requested = ng.updateCalls().map((c) => c.args[0].input.scalingConfig?.desiredSize);
    expect(requested).toEqual([9, 7, 7]);
    expect(ng.eksMock.commandCalls(DescribeNodegroupCommand)).toHaveLength(3);
    expect(logs.lines.filter((l) => l.event === 'resize.in-use').map((l) => l.attempt)).toEqual([1, 2]);
    // Backoff 5 s then 10 s, each 3/4 of the exponential step with random() = 0.5.
    expect(time.sleeps.slice(0, 2)).toEqual([3750, 7500]);
    expect(ng.group.desiredSize).toBe(7);
  });

  it('does not send a raise it waited for as a lowering, once another update took the group past it', async () => {
    // boa asks 3 -> 5 (a raise: its caller protected nothing). While it waits out another update, that
    // update takes the group to 8: 5 would now let the group pick three nodes to end, busy ones too.
    let outside = false;
    const { ng, pool, logs } = setup({
      desiredSize: 3,
      whileSleeping: () => {
        if (outside) return;
        outside = true;
        ng.setDesiredOutside(8);
      },
    });
    ng.failNext('UpdateNodegroupConfig', [inUse()]);
    await expect(pool.setDesiredSize(5)).rejects.toThrow(
      /another update set its desired size to 8 while boa waited to raise it to 5; a lowering is not sent/,
    );
    expect(ng.updateCalls().map((c) => c.args[0].input.scalingConfig?.desiredSize)).toEqual([5]);
    expect(ng.group.desiredSize).toBe(8);
    expect(logs.events()).toContain('resize.turned-lowering');
    // A lowering asked as one is sent as one, in-use or not.
    ng.failNext('UpdateNodegroupConfig', [inUse()]);
    expect(await pool.setDesiredSize(4)).toMatchObject({ requested: 4 });
    expect(ng.group.desiredSize).toBe(4);
  });

  it('fails clearly when the group stays in use, leaving the desired size alone, within seconds', async () => {
    const { ng, pool, logs, time } = setup();
    ng.failNext('UpdateNodegroupConfig', Array.from({ length: 8 }, inUse));
    await expect(pool.setDesiredSize(5)).rejects.toThrow(
      /still busy with another update after 3 attempts \(ResourceInUseException\); desired size left at 2/,
    );
    expect(ng.updateCalls()).toHaveLength(3);
    expect(ng.group.desiredSize).toBe(2);
    expect(logs.lines.at(-1)).toMatchObject({ event: 'resize.failed', reason: 'in-use' });
    // The caller's next pass asks again: no pass waits minutes for the group (it waited 8 attempts,
    // up to 4 minutes, before).
    expect(time.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(15_000);
  });

  it('retries throttling with backoff and the same idempotency token', async () => {
    const { ng, pool, logs, time } = setup();
    const tooMany = new EKSServiceException({
      name: 'TooManyRequestsException',
      $fault: 'client',
      $metadata: { httpStatusCode: 429 },
      message: 'slow down',
    });
    ng.failNext('UpdateNodegroupConfig', [throttled(), tooMany]);
    ng.failNext('DescribeNodegroup', [throttled()]);
    expect(await pool.setDesiredSize(4)).toMatchObject({ requested: 4, updateId: 'update-1' });
    const tokens = ng.updateCalls().map((c) => c.args[0].input.clientRequestToken);
    expect(tokens).toHaveLength(3);
    expect(new Set(tokens).size).toBe(1);
    const retries = logs.lines.filter((l) => l.event === 'aws.retry');
    expect(retries.map((l) => [l.operation, l.kind, l.attempt])).toEqual([
      ['DescribeNodegroup', 'throttling', 1],
      ['UpdateNodegroupConfig', 'throttling', 1],
      ['UpdateNodegroupConfig', 'throttling', 2],
    ]);
    // Exponential from 500 ms: 375, then 375, 750 (equal jitter at random() = 0.5).
    expect(time.sleeps.slice(0, 3)).toEqual([375, 375, 750]);
  });

  it('gives up on throttling after the policy attempts, naming the call and the error', async () => {
    const { ng, pool } = setup();
    ng.failNext('UpdateNodegroupConfig', Array.from({ length: 5 }, throttled));
    await expect(pool.setDesiredSize(4)).rejects.toThrow(
      'UpdateNodegroupConfig failed: ThrottlingException: Rate exceeded (gave up after 5 attempts)',
    );
    expect(ng.group.desiredSize).toBe(2);
  });

  it('a retry after a lost response (timeout) does not apply the resize twice', async () => {
    const { ng, pool } = setup();
    const timeout = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    ng.failNext('UpdateNodegroupConfig', [timeout], { afterApply: true });
    expect(await pool.setDesiredSize(4)).toMatchObject({ requested: 4, updateId: 'update-1' });
    expect(ng.updateCalls()).toHaveLength(2);
    expect(ng.updates.size).toBe(1);
  });

  it('does not retry a validation error', async () => {
    const { ng, pool } = setup();
    ng.failNext('UpdateNodegroupConfig', [
      new InvalidParameterException({ message: 'desiredSize is invalid', $metadata: {} }),
    ]);
    await expect(pool.setDesiredSize(4)).rejects.toThrow(
      'UpdateNodegroupConfig failed: InvalidParameterException: desiredSize is invalid (not retried (fatal))',
    );
    expect(ng.updateCalls()).toHaveLength(1);
  });

  it('reports a Failed update with the errors EKS gave', async () => {
    const { ng, pool, logs } = setup();
    ng.failNextUpdates();
    await expect(pool.setDesiredSize(4)).rejects.toThrow(
      'EKS update update-1 (desiredSize 4) ended Failed: AsgInstanceLaunchFailures: InsufficientInstanceCapacity',
    );
    expect(logs.lines.at(-1)).toMatchObject({ event: 'resize.failed', requested: 4 });
  });

  it('sends a resize again after a Failed update, rather than being answered with the failed one', async () => {
    const { ng, pool } = setup();
    ng.failNextUpdates();
    await expect(pool.setDesiredSize(4)).rejects.toThrow(/update-1 \(desiredSize 4\) ended Failed/);
    // The group did not change (a failed update applies nothing), so the same resize starts from the
    // same state; EKS answers a token it has seen with that token's first update.
    ng.succeedNextUpdates();
    expect(await pool.setDesiredSize(4)).toMatchObject({ requested: 4, updateId: 'update-2' });
    expect(ng.group.desiredSize).toBe(4);
    const tokens = ng.updateCalls().map((c) => c.args[0].input.clientRequestToken);
    expect(new Set(tokens).size).toBe(2);
    // Retries of one call still share their token (a lost response is not applied twice).
    const timeout = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    ng.failNextUpdates();
    await expect(pool.setDesiredSize(6)).rejects.toThrow(/ended Failed/);
    ng.succeedNextUpdates();
    ng.failNext('UpdateNodegroupConfig', [timeout], { afterApply: true });
    expect(await pool.setDesiredSize(6)).toMatchObject({ requested: 6, updateId: 'update-4' });
    expect(ng.updates.size).toBe(4);
    expect(ng.group.desiredSize).toBe(6);
  });

  it('leaves an update still InProgress after updateWaitMs in flight, and sends nothing else until it ends', async () => {
    const { ng, pool, logs, time } = setup({ updatePolls: 1000 });
    expect(await pool.setDesiredSize(4)).toEqual({ requested: 4, updateId: 'update-1' });
    // Followed for 30 s at most, not the many minutes an update can hang.
    expect(time.sleeps.reduce((a, b) => a + b, 0)).toBe(30_000);
    expect(logs.events()).toContain('resize.in-flight');
    const polls = () => ng.eksMock.commandCalls(DescribeUpdateCommand).length;
    let before = polls();
    expect(await pool.describe()).toMatchObject({ desiredSize: 4, updateInFlight: 'update-1' });
    expect(polls() - before).toBe(1);
    // The emulator would refuse update-2 (ResourceInUse); the pool does not send it, nor wait.
    const slept = time.sleeps.length;
    before = polls();
    await expect(pool.setDesiredSize(6)).rejects.toThrow(
      /update-1 of boa\/gpu still InProgress; desired size 6 not sent/,
    );
    expect(polls() - before).toBe(1);
    expect(time.sleeps).toHaveLength(slept);
    expect(ng.updateCalls()).toHaveLength(1);
    // EKS ends it: the next describe() sees that once, and the next resize goes.
    ng.updates.get('update-1')!.pollsLeft = 0;
    ng.setUpdatePolls(0);
    expect((await pool.describe()).updateInFlight).toBeUndefined();
    expect(logs.lines.find((l) => l.event === 'update.settled')).toMatchObject({
      updateId: 'update-1',
      status: 'Successful',
    });
    expect(await pool.setDesiredSize(6)).toMatchObject({ requested: 6, updateId: 'update-2' });
    expect(logs.events()).not.toContain('resize.in-use');
    expect((await pool.describe()).updateInFlight).toBeUndefined();
  });

  it('an update left in flight that ends Failed is seen by describe(), and the same resize is sent anew', async () => {
    const { ng, pool, logs } = setup({ updatePolls: 1000 });
    ng.failNextUpdates();
    expect(await pool.setDesiredSize(4)).toMatchObject({ updateId: 'update-1' });
    ng.updates.get('update-1')!.pollsLeft = 0;
    expect((await pool.describe()).updateInFlight).toBeUndefined();
    expect(logs.lines.find((l) => l.event === 'update.settled')).toMatchObject({
      status: 'Failed',
      errors: ['AsgInstanceLaunchFailures: InsufficientInstanceCapacity'],
    });
    // The group did not change, so the same resize starts from the same state: a new token all the
    // same, or EKS would answer with the failed update.
    ng.succeedNextUpdates();
    ng.setUpdatePolls(0);
    expect(await pool.setDesiredSize(4)).toMatchObject({ requested: 4, updateId: 'update-2' });
    expect(ng.group.desiredSize).toBe(4);
    const tokens = ng.updateCalls().map((c) => c.args[0].input.clientRequestToken);
    expect(new Set(tokens).size).toBe(2);
  });

  it('follows an update a previous run sent (adoptUpdate) until it ends; one EKS does not know is not waited for', async () => {
    const { ng, pool, logs } = setup({ updatePolls: 1000 });
    expect(await pool.setDesiredSize(4)).toMatchObject({ updateId: 'update-1' });
    // A new pool over the same group, as after a restart, told of the stored update.
    const restarted = new EksNodePool(
      { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4 },
      {
        eks: ng.eks,
        ec2: ng.ec2,
        clock: fakeTime().clock,
        sleep: async () => undefined,
        random: () => 0.5,
        logger: logs.logger,
      },
    );
    restarted.adoptUpdate('update-1');
    expect((await restarted.describe()).updateInFlight).toBe('update-1');
    ng.updates.get('update-1')!.pollsLeft = 0;
    expect((await restarted.describe()).updateInFlight).toBeUndefined();
    // An id EKS no longer knows (ResourceNotFoundException): dropped, said, and describe() goes on.
    restarted.adoptUpdate('update-77');
    expect((await restarted.describe()).updateInFlight).toBeUndefined();
    expect(logs.lines.find((l) => l.event === 'update.unknown')).toMatchObject({ updateId: 'update-77' });
  });

  it('queues concurrent resizes so the second starts after the first has finished', async () => {
    const { ng, pool, logs } = setup({ updatePolls: 3 });
    const results = await Promise.all([
      pool.setDesiredSize(3),
      pool.setDesiredSize(5),
      pool.setDesiredSize(5),
    ]);
    expect(results.map((r) => r.requested)).toEqual([3, 5, 5]);
    // The emulator refuses an update while another is InProgress, so no in-use wait means no overlap.
    expect(logs.events()).not.toContain('resize.in-use');
    expect(ng.updateCalls()).toHaveLength(2);
    expect(ng.group.desiredSize).toBe(5);
  });
});
