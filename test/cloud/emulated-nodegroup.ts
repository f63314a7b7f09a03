import { DescribeInstancesCommand, EC2Client, type Instance } from '@aws-sdk/client-ec2';
import {
  DescribeNodegroupCommand,
  DescribeUpdateCommand,
  EKSClient,
  InvalidParameterException,
  ResourceInUseException,
  UpdateNodegroupConfigCommand,
} from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import type { Clock } from '../../src/service/ports.ts';

export const CLUSTER = 'boa';
export const NODEGROUP = 'gpu';

export interface EmulatedNodegroupOptions {
  readonly clock: Clock;
  readonly minSize: number;
  readonly maxSize: number;
  /** Default minSize; that many running instances exist at the start, launched an hour earlier. */
  readonly desiredSize?: number;
  /** Instances are 'pending' this long after launch, then 'running'. */
  readonly bootMs?: number;
  /** DescribeUpdate answers InProgress this many times before the update's final status. */
  readonly updatePolls?: number;
  /** DescribeInstances page size, whatever MaxResults asks, so that small groups still page. */
  readonly pageSize?: number;
}

export type EmulatedOperation =
  'DescribeNodegroup' | 'UpdateNodegroupConfig' | 'DescribeUpdate' | 'DescribeInstances';

interface InjectedFailure {
  /** Undefined: this call succeeds (to fail a later one). */
  readonly error: Error | undefined;
  /** Fail after doing the work, as when the response is lost to a timeout. */
  readonly afterApply: boolean;
}

interface EmulatedUpdate {
  id: string;
  desiredSize: number;
  pollsLeft: number;
  finalStatus: 'Successful' | 'Failed';
}

/**
 * An EKS managed node group behind aws-sdk-client-mock: DescribeNodegroup, UpdateNodegroupConfig (with
 * idempotency tokens, bounds validation, and ResourceInUseException while an update is in progress, as
 * EKS does), DescribeUpdate, and the group's EC2 instances (newest terminated first on scale-down).
 */
export function emulateNodegroup(options: EmulatedNodegroupOptions) {
  const { clock, bootMs = 60_000, pageSize = 2 } = options;
  const eks = new EKSClient({ region: 'us-east-1' });
  const ec2 = new EC2Client({ region: 'us-east-1' });
  const eksMock = mockClient(eks);
  const ec2Mock = mockClient(ec2);
  const group = {
    minSize: options.minSize,
    maxSize: options.maxSize,
    desiredSize: options.desiredSize ?? options.minSize,
    modifiedAt: clock.now() - 86_400_000,
  };
  const instances: { id: string; launchedAt: number }[] = [];
  const updates = new Map<string, EmulatedUpdate>();
  const tokens = new Map<string, string>();
  let nextInstance = 1;
  let updatePolls = options.updatePolls ?? 1;
  let finalStatus: EmulatedUpdate['finalStatus'] = 'Successful';

  const reconcile = (launchedAt: number) => {
    while (instances.length < group.desiredSize) {
      instances.push({ id: `i-${String(nextInstance++).padStart(17, '0')}`, launchedAt });
    }
    instances.splice(group.desiredSize);
  };
  reconcile(clock.now() - 3_600_000);
  const pageRequests: { NextToken?: string; MaxResults?: number }[] = [];
  const failures = new Map<EmulatedOperation, InjectedFailure[]>();
  const failNow = (operation: EmulatedOperation, afterApply: boolean) => {
    const queue = failures.get(operation) ?? [];
    if (queue.length === 0 || queue[0]?.afterApply !== afterApply) return;
    const error = queue.shift()?.error;
    if (error) throw error;
  };
  const inProgress = () => [...updates.values()].some((u) => u.pollsLeft > 0);

  eksMock.on(DescribeNodegroupCommand).callsFake(() => {
    failNow('DescribeNodegroup', false);
    return {
      nodegroup: {
        clusterName: CLUSTER,
        nodegroupName: NODEGROUP,
        scalingConfig: { minSize: group.minSize, maxSize: group.maxSize, desiredSize: group.desiredSize },
        modifiedAt: new Date(group.modifiedAt),
      },
    };
  });

  eksMock.on(UpdateNodegroupConfigCommand).callsFake((input) => {
    failNow('UpdateNodegroupConfig', false);
    const token: string | undefined = input.clientRequestToken;
    const seen = token && tokens.get(token);
    if (seen) return { update: { id: seen, status: 'InProgress', type: 'ConfigUpdate' } };
    if (inProgress()) {
      throw new ResourceInUseException({ message: 'an update is in progress', $metadata: {} });
    }
    const desired: number = input.scalingConfig.desiredSize;
    const min = input.scalingConfig.minSize ?? group.minSize;
    const max = input.scalingConfig.maxSize ?? group.maxSize;
    if (desired < min || desired > max) {
      throw new InvalidParameterException({
        message: `desired ${desired} outside [${min}, ${max}]`,
        $metadata: {},
      });
    }
    const id = `update-${updates.size + 1}`;
    updates.set(id, { id, desiredSize: desired, pollsLeft: updatePolls, finalStatus });
    if (token) tokens.set(token, id);
    if (finalStatus === 'Successful') {
      Object.assign(group, { minSize: min, maxSize: max, desiredSize: desired, modifiedAt: clock.now() });
      reconcile(clock.now());
    }
    failNow('UpdateNodegroupConfig', true);
    return { update: { id, status: 'InProgress', type: 'ConfigUpdate' } };
  });

  eksMock.on(DescribeUpdateCommand).callsFake((input) => {
    failNow('DescribeUpdate', false);
    const update = updates.get(input.updateId);
    if (!update) throw new Error(`no update ${input.updateId}`);
    if (update.pollsLeft > 0) {
      update.pollsLeft--;
      return { update: { id: update.id, status: 'InProgress' } };
    }
    const errors =
      update.finalStatus === 'Failed'
        ? [{ errorCode: 'AsgInstanceLaunchFailures', errorMessage: 'InsufficientInstanceCapacity' }]
        : [];
    return { update: { id: update.id, status: update.finalStatus, errors } };
  });

  ec2Mock.on(DescribeInstancesCommand).callsFake((input) => {
    failNow('DescribeInstances', false);
    // Copied now: the SDK's paginator reuses one input object, so recorded calls show only its last token.
    pageRequests.push({ NextToken: input.NextToken, MaxResults: input.MaxResults });
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const page: Instance[] = instances.slice(start, start + pageSize).map((i) => ({
      InstanceId: i.id,
      InstanceType: 'g4dn.12xlarge',
      LaunchTime: new Date(i.launchedAt),
      State: { Name: clock.now() < i.launchedAt + bootMs ? 'pending' : 'running' },
    }));
    const next = start + pageSize < instances.length ? String(start + pageSize) : undefined;
    return { Reservations: [{ Instances: page }], NextToken: next };
  });

  return {
    eks,
    ec2,
    eksMock,
    ec2Mock,
    group,
    instances,
    updates,
    /** DescribeInstances requests as they were when sent. */
    pageRequests,
    /** Another actor (the console, say) changes the group's bounds. */
    setBounds(minSize: number, maxSize: number) {
      Object.assign(group, { minSize, maxSize, modifiedAt: clock.now() });
    },
    /** The next calls of `operation` fail with these errors, in order (undefined: that call succeeds). */
    failNext(
      operation: EmulatedOperation,
      errors: (Error | undefined)[],
      options: { afterApply?: boolean } = {},
    ) {
      const queue = failures.get(operation) ?? [];
      queue.push(...errors.map((error) => ({ error, afterApply: options.afterApply ?? false })));
      failures.set(operation, queue);
    },
    setUpdatePolls(polls: number) {
      updatePolls = polls;
    },
    failNextUpdates() {
      finalStatus = 'Failed';
    },
    updateCalls: () => eksMock.commandCalls(UpdateNodegroupConfigCommand),
  };
}
