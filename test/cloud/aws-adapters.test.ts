import { CloudWatchClient, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { createAwsMetricsSink, createAwsNodePool } from '../../src/cloud/aws/index.ts';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { fakeTime, START } from './fake-time.ts';

const silent = pino({ level: 'silent' });

describe('AWS adapters from the service configuration', () => {
  it('createAwsNodePool honours maxNodes as the hard cap', async () => {
    const time = fakeTime();
    const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 10, updatePolls: 0 });
    const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
    const pool = createAwsNodePool(
      { gpusPerNode: 4, maxNodes: 3, aws: { clusterName: CLUSTER, nodegroupName: NODEGROUP } },
      silent,
      { clock: time.clock, clients: { eks: ng.eks, ec2: ng.ec2, cloudwatch } },
    );
    expect(pool.kind).toBe('aws');
    expect(await pool.setDesiredSize(8)).toMatchObject({ requested: 3 });
  });

  it('createAwsMetricsSink publishes in namespace boa with the Cluster dimension', async () => {
    const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
    const mock = mockClient(cloudwatch);
    mock.on(PutMetricDataCommand).resolves({});
    const sink = createAwsMetricsSink(
      { gpusPerNode: 4, aws: { clusterName: 'prod', nodegroupName: 'gpu' } },
      silent,
      {
        clients: { cloudwatch },
      },
    );
    await sink.put([{ name: 'DesiredNodes', value: 2, unit: 'Count' }], START);
    const input = mock.commandCalls(PutMetricDataCommand)[0]?.args[0].input;
    expect(input?.Namespace).toBe('boa');
    expect(input?.MetricData?.[0]?.Dimensions).toEqual([{ Name: 'Cluster', Value: 'prod' }]);
  });

  it('refuses a configuration without the node group', () => {
    expect(() => createAwsNodePool({ gpusPerNode: 4 }, silent)).toThrow('cloud "aws" needs aws.clusterName');
  });
});
