import { DescribeNodegroupCommand, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  applyBounds,
  type EksLike,
  handler,
  planScalingUpdate,
  readTarget,
  type ScalingBounds,
} from '../../infra/gpu-scaling-handler/index.mjs';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { fakeTime } from '../cloud/fake-time.ts';

const target = { clusterName: 'boa', nodegroupName: 'gpu-abc', minSize: 0, maxSize: 8 };
const noWait = { maxAttempts: 3, retryMs: 1, sleep: async () => {} };

/** `current` as DescribeNodegroup reads it; `desiredSizes`, if given, are the desired sizes of later reads. */
function fakeEks(current: ScalingBounds, failures: Error[] = [], desiredSizes: number[] = []) {
  const updates: ScalingBounds[] = [];
  const eks: EksLike = {
    describeNodegroup: vi.fn(async () => {
      const scalingConfig = { ...current };
      if (desiredSizes.length > 0) current = { ...current, desiredSize: desiredSizes.shift()! };
      return { nodegroup: { scalingConfig } };
    }),
    updateNodegroupConfig: vi.fn(async ({ scalingConfig }) => {
      const failure = failures.shift();
      if (failure) throw failure;
      updates.push(scalingConfig);
      return { update: { id: `u${updates.length}` } };
    }),
  };
  return { eks, updates };
}

const inUse = () => Object.assign(new Error('update in progress'), { name: 'ResourceInUseException' });

describe('planScalingUpdate', () => {
  it('changes nothing when the bounds are already right, whatever the desired size', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 5 }, { minSize: 0, maxSize: 8 })).toEqual(
      {
        action: 'none',
      },
    );
  });

  it('sends only min and max: the desired size boa set is kept', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 1, desiredSize: 1 }, { minSize: 0, maxSize: 8 })).toEqual(
      { action: 'update', scalingConfig: { minSize: 0, maxSize: 8 } },
    );
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 4 }, { minSize: 0, maxSize: 4 })).toEqual(
      { action: 'update', scalingConfig: { minSize: 0, maxSize: 4 } },
    );
  });

  it('never lowers the desired size: a new max below it waits for boa to scale in', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 6 }, { minSize: 0, maxSize: 4 })).toEqual(
      { action: 'wait', desiredSize: 6 },
    );
  });

  it('raises the desired size to a raised min (that only launches nodes)', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 0 }, { minSize: 1, maxSize: 8 })).toEqual(
      { action: 'update', scalingConfig: { minSize: 1, maxSize: 8, desiredSize: 1 } },
    );
  });
});

describe('applyBounds', () => {
  it('updates a freshly created group (max 1) to the configured max without a desired size', async () => {
    const { eks, updates } = fakeEks({ minSize: 0, maxSize: 1, desiredSize: 0 });
    await expect(applyBounds(eks, target, noWait)).resolves.toMatchObject({ updated: true, updateId: 'u1' });
    expect(updates).toEqual([{ minSize: 0, maxSize: 8 }]);
  });

  it('does not call UpdateNodegroupConfig when nothing changes (EKS rejects no-op updates)', async () => {
    const { eks } = fakeEks({ minSize: 0, maxSize: 8, desiredSize: 3 });
    await expect(applyBounds(eks, target, noWait)).resolves.toEqual({ updated: false });
    expect(eks.updateNodegroupConfig).not.toHaveBeenCalled();
  });

  it('waits while another update (boa resizing) is in flight, then re-reads and updates', async () => {
    const { eks, updates } = fakeEks({ minSize: 0, maxSize: 4, desiredSize: 2 }, [inUse(), inUse()]);
    const sleep = vi.fn(async () => {});
    await applyBounds(eks, target, { ...noWait, sleep });
    expect(sleep).toHaveBeenCalledTimes(2);
    expect(eks.describeNodegroup).toHaveBeenCalledTimes(3);
    expect(updates).toEqual([{ minSize: 0, maxSize: 8 }]);
  });

  it('gives up after maxAttempts, and rethrows other errors at once', async () => {
    const busy = fakeEks({ minSize: 0, maxSize: 4 }, [inUse(), inUse(), inUse()]);
    await expect(applyBounds(busy.eks, target, noWait)).rejects.toThrow('update in progress');
    const denied = fakeEks({ minSize: 0, maxSize: 4 }, [
      Object.assign(new Error('no'), { name: 'AccessDenied' }),
    ]);
    await expect(applyBounds(denied.eks, target, noWait)).rejects.toThrow('no');
    expect(denied.eks.describeNodegroup).toHaveBeenCalledTimes(1);
  });
});

describe('applyBounds with a max below the desired size', () => {
  const lower = { ...target, maxSize: 4 };
  // Each wait is logged (for the Lambda's log group); keep the test output quiet.
  beforeEach(() => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('waits for boa to bring the desired size down, then sends only the bounds', async () => {
    // boa, restarted with BOA_MAX_NODES=4, removes its own victims: 6, 6, 5, then 4.
    const { eks, updates } = fakeEks({ minSize: 0, maxSize: 8, desiredSize: 6 }, [], [6, 5, 4]);
    const sleep = vi.fn(async () => {});
    await expect(applyBounds(eks, lower, { maxAttempts: 10, retryMs: 15_000, sleep })).resolves.toMatchObject(
      {
        updated: true,
      },
    );
    expect(sleep).toHaveBeenCalledTimes(3);
    expect(sleep).toHaveBeenCalledWith(15_000);
    expect(updates).toEqual([{ minSize: 0, maxSize: 4 }]);
  });

  it('fails the deploy with what to do when the desired size never comes down, and sends nothing', async () => {
    const { eks } = fakeEks({ minSize: 0, maxSize: 8, desiredSize: 6 });
    const sleep = vi.fn(async () => {});
    const failed = applyBounds(eks, lower, { maxAttempts: 5, retryMs: 15_000, sleep });
    await expect(failed).rejects.toThrow(
      /boa\/gpu-abc: desired size 6 is above the wanted maxSize 4 .*in 60 s.*-c maxGpuNodes=6/,
    );
    await expect(failed).rejects.toThrow(/lower the budget/);
    expect(eks.updateNodegroupConfig).not.toHaveBeenCalled();
    expect(eks.describeNodegroup).toHaveBeenCalledTimes(5);
    expect(sleep).toHaveBeenCalledTimes(4);
  });

  it('stops waiting before the Lambda runs out of time', async () => {
    const { eks } = fakeEks({ minSize: 0, maxSize: 8, desiredSize: 6 });
    let left = 3 * 60_000;
    const sleep = vi.fn(async (ms: number) => {
      left -= ms;
    });
    await expect(
      applyBounds(eks, lower, { maxAttempts: 100, retryMs: 15_000, sleep, timeLeftMs: () => left }),
    ).rejects.toThrow(/desired size 6/);
    // 3 min left: waits while more than a read's pause plus a minute remain.
    expect(sleep.mock.calls.length).toBe(7);
    expect(eks.updateNodegroupConfig).not.toHaveBeenCalled();
  });

  it('on the emulated node group: the Auto Scaling group terminates no node, boa chooses them', async () => {
    const time = fakeTime();
    const g = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 8, desiredSize: 6, updatePolls: 0 });
    const eks: EksLike = {
      describeNodegroup: (input) => g.eks.send(new DescribeNodegroupCommand(input)) as never,
      updateNodegroupConfig: (input) => g.eks.send(new UpdateNodegroupConfigCommand(input)) as never,
    };
    const before = g.instances.map((i) => i.id);
    const [idle1, idle2] = before.slice(-2);
    // boa's pass between two reads: it terminates the two idle nodes it chose, decrementing the size.
    const sleep = async (ms: number) => {
      await time.sleep(ms);
      if (time.sleeps.length === 2) for (const id of [idle1!, idle2!]) g.asg.terminateInstance(id, true);
    };
    const result = await applyBounds(
      eks,
      { ...lower, nodegroupName: 'gpu' },
      {
        maxAttempts: 10,
        retryMs: 15_000,
        sleep,
      },
    );
    expect(result).toMatchObject({ updated: true, scalingConfig: { minSize: 0, maxSize: 4 } });
    expect(g.updateCalls().map((c) => c.args[0].input.scalingConfig)).toEqual([{ minSize: 0, maxSize: 4 }]);
    expect(g.group).toMatchObject({ minSize: 0, maxSize: 4, desiredSize: 4 });
    time.advance(120_000);
    // Exactly the nodes boa chose are gone: the busy ones the group's own policy would pick are all there.
    expect(g.instances.map((i) => i.id)).toEqual(before.slice(0, 4));
  });
});

describe('custom resource properties and events', () => {
  it('reads CloudFormation string properties', () => {
    expect(readTarget({ ClusterName: 'boa', NodegroupName: 'gpu-abc', MinSize: '0', MaxSize: '8' })).toEqual(
      target,
    );
  });

  it('rejects missing names and bad bounds', () => {
    expect(() => readTarget({ ClusterName: 'boa', MinSize: '0', MaxSize: '8' })).toThrow(/NodegroupName/);
    for (const [min, max] of [
      ['0', '0'],
      ['3', '2'],
      ['-1', '4'],
      ['0', 'x'],
    ]) {
      expect(() => readTarget({ ClusterName: 'c', NodegroupName: 'n', MinSize: min, MaxSize: max })).toThrow(
        /bounds/,
      );
    }
  });

  it('does nothing on Delete (the node group goes with the stack)', async () => {
    await expect(
      handler({ RequestType: 'Delete', PhysicalResourceId: 'boa/gpu-abc', ResourceProperties: {} }),
    ).resolves.toEqual({ PhysicalResourceId: 'boa/gpu-abc' });
  });
});
