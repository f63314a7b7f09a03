import { describe, expect, it, vi } from 'vitest';
import {
  applyBounds,
  type EksLike,
  handler,
  planScalingUpdate,
  readTarget,
  type ScalingBounds,
} from '../../infra/gpu-scaling-handler/index.mjs';

const target = { clusterName: 'boa', nodegroupName: 'gpu-abc', minSize: 0, maxSize: 8 };
const noWait = { maxAttempts: 3, retryMs: 1, sleep: async () => {} };

function fakeEks(current: ScalingBounds, failures: Error[] = []) {
  const updates: ScalingBounds[] = [];
  const eks: EksLike = {
    describeNodegroup: vi.fn(async () => ({ nodegroup: { scalingConfig: { ...current } } })),
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
    expect(
      planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 5 }, { minSize: 0, maxSize: 8 }),
    ).toBeUndefined();
  });

  it('sends only min and max: the desired size boa set is kept', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 1, desiredSize: 1 }, { minSize: 0, maxSize: 8 })).toEqual(
      {
        minSize: 0,
        maxSize: 8,
      },
    );
  });

  it('clamps the desired size only when the new bounds exclude it', () => {
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 6 }, { minSize: 0, maxSize: 4 })).toEqual(
      {
        minSize: 0,
        maxSize: 4,
        desiredSize: 4,
      },
    );
    expect(planScalingUpdate({ minSize: 0, maxSize: 8, desiredSize: 0 }, { minSize: 1, maxSize: 8 })).toEqual(
      {
        minSize: 1,
        maxSize: 8,
        desiredSize: 1,
      },
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
