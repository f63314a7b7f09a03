import { DescribeInstancesCommand, EC2ServiceException } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

function setup(desiredSize: number) {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 20, desiredSize, pageSize: 2 });
  const pool = new EksNodePool(
    { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4 },
    {
      eks: ng.eks,
      ec2: ng.ec2,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0.5,
      logger: logs.logger,
    },
  );
  return { time, logs, ng, pool };
}

describe('EksNodePool.listNodes (EC2 DescribeInstances)', () => {
  it('reads every page, filtered to the node group and to billed states', async () => {
    const { ng, pool } = setup(5);
    const nodes = await pool.listNodes();
    expect(nodes.map((n) => n.id)).toEqual(ng.instances.map((i) => i.id));
    const calls = ng.ec2Mock.commandCalls(DescribeInstancesCommand).map((c) => c.args[0].input);
    expect(ng.pageRequests).toEqual([
      { NextToken: undefined, MaxResults: 500 },
      { NextToken: '2', MaxResults: 500 },
      { NextToken: '4', MaxResults: 500 },
    ]);
    expect(calls).toHaveLength(3);
    expect(calls[0]?.Filters).toEqual([
      { Name: 'tag:eks:cluster-name', Values: [CLUSTER] },
      { Name: 'tag:eks:nodegroup-name', Values: [NODEGROUP] },
      { Name: 'instance-state-name', Values: ['pending', 'running'] },
    ]);
  });

  it('takes launch times from EC2, GPUs from the config; billed and ready from running (no Kubernetes view)', async () => {
    const { ng, pool, time } = setup(0);
    const now = time.clock.now();
    ng.addInstance({ id: 'i-booting', launchedAt: now - 10_000 });
    ng.addInstance({ id: 'i-old', launchedAt: now - 7_200_000 });
    ng.addInstance({ id: 'i-mid', launchedAt: now - 3_600_000 });
    expect(await pool.listNodes()).toEqual([
      { id: 'i-old', launchedAt: now - 7_200_000, gpus: 4, ready: true, billed: true },
      { id: 'i-mid', launchedAt: now - 3_600_000, gpus: 4, ready: true, billed: true },
      {
        id: 'i-booting',
        launchedAt: now - 10_000,
        gpus: 4,
        ready: false,
        billed: false,
        waitingFor: 'booting',
      },
    ]);
  });

  it('restarts the listing when a page is throttled, without duplicates', async () => {
    const { ng, pool, logs } = setup(5);
    const limit = new EC2ServiceException({
      name: 'RequestLimitExceeded',
      $fault: 'client',
      $metadata: { httpStatusCode: 503 },
      message: 'Request limit exceeded.',
    });
    // The first page succeeds, the second is throttled; the retry lists all three pages again.
    ng.failNext('DescribeInstances', [undefined, limit]);
    const listing = pool.listNodes();
    const nodes = await listing;
    expect(nodes).toHaveLength(5);
    expect(new Set(nodes.map((n) => n.id)).size).toBe(5);
    expect(ng.ec2Mock.commandCalls(DescribeInstancesCommand)).toHaveLength(5);
    expect(logs.lines.find((l) => l.event === 'aws.retry')).toMatchObject({
      operation: 'DescribeInstances',
      kind: 'throttling',
      errorName: 'RequestLimitExceeded',
    });
  });

  it('fails with the AWS error when EC2 refuses access, without retrying', async () => {
    const { ng, pool } = setup(2);
    const denied = new EC2ServiceException({
      name: 'UnauthorizedOperation',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
      message: 'You are not authorized to perform this operation.',
    });
    ng.failNext('DescribeInstances', [denied]);
    await expect(pool.listNodes()).rejects.toThrow(
      /DescribeInstances failed: UnauthorizedOperation: .*not retried/,
    );
    expect(ng.ec2Mock.commandCalls(DescribeInstancesCommand)).toHaveLength(1);
  });
});
