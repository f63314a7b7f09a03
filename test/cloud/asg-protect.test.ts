import {
  AutoScalingClient,
  AutoScalingServiceException,
  SetInstanceProtectionCommand,
} from '@aws-sdk/client-auto-scaling';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { protectInstances } from '../../src/cloud/aws/asg.ts';
import { DEFAULT_RETRY } from '../../src/cloud/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/** What the ASG answers for an instance it is terminating (Terminating:Wait while EKS drains it) or launching. */
function notInService(id: string) {
  return new AutoScalingServiceException({
    name: 'ValidationError',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: `The instance ${id} is not in InService or EnteringStandby or Standby.`,
  });
}

describe('protectInstances (SetInstanceProtection)', () => {
  it('protects the others when one instance is leaving the group, and says which it skipped', async () => {
    const time = fakeTime();
    const logs = captureLogs();
    const client = new AutoScalingClient({ region: 'us-east-1' });
    const mock = mockClient(client);
    const protectedIds: string[] = [];
    mock.on(SetInstanceProtectionCommand).callsFake((input) => {
      if (input.InstanceIds.includes('i-leaving')) throw notInService('i-leaving');
      protectedIds.push(...input.InstanceIds);
      return {};
    });
    const ctx = {
      sleep: time.sleep,
      random: () => 0.5,
      logger: logs.logger,
      policy: DEFAULT_RETRY,
      autoscaling: client,
    };
    await protectInstances('eks-gpu-asg', ['i-busy1', 'i-leaving', 'i-busy2'], true, ctx);
    expect(protectedIds.sort()).toEqual(['i-busy1', 'i-busy2']);
    expect(logs.lines.find((l) => l.event === 'node.protection-skipped')).toMatchObject({
      instanceId: 'i-leaving',
    });
  });
});
