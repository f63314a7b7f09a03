import {
  AutoScalingClient,
  DescribeAutoScalingGroupsCommand,
  DescribeScalingActivitiesCommand,
  SetInstanceProtectionCommand,
  TerminateInstanceInAutoScalingGroupCommand,
  DescribeAutoScalingInstancesCommand,
  ResumeProcessesCommand,
  SuspendProcessesCommand,
} from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand, EC2Client, type Filter, type Instance } from '@aws-sdk/client-ec2';
import {
  DescribeNodegroupCommand,
  DescribeUpdateCommand,
  EKSClient,
  InvalidParameterException,
  ListNodegroupsCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateNodegroupConfigCommand,
} from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import type { Logger } from 'pino';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import type { Clock } from '../../src/service/ports.ts';
import { AsgError, EmulatedAsg, type EmulatedInstance, ZONES } from './emulated-asg.ts';
import { instanceTypeFacts } from '../../src/core/instance-types.ts';
import { EmulatedKubeNodes } from './emulated-kube-nodes.ts';

export const CLUSTER = 'boa';
export const NODEGROUP = 'gpu';
/** The label the infra puts on the GPU node group (infra/cluster.ts NODE_ROLE_LABEL): how boa finds it. */
export const ROLE_LABEL = { 'boa/node-role': 'gpu' };
/** The tags the CDK app puts on its node groups (infra/boa-stack.ts): which deployment made a group. */
export const STACK_TAGS = { app: 'boa', 'boa:cluster': CLUSTER };

/** Another node group of the cluster, as DescribeNodegroup shows it (addGroup, a replaced one). */
interface OtherGroup {
  readonly name: string;
  readonly arn: string;
  readonly asg: EmulatedAsg;
  readonly labels: Record<string, string>;
  readonly tags: Record<string, string>;
}

export interface EmulatedNodegroupOptions {
  readonly clock: Clock;
  readonly minSize: number;
  readonly maxSize: number;
  /** Default minSize; that many running instances exist at the start, launched an hour earlier. */
  readonly desiredSize?: number;
  /** Instances are 'pending' this long after launch, then 'running'. */
  readonly bootMs?: number;
  /** A terminated instance stays 'shutting-down' this long (default 30 s). */
  readonly shutdownMs?: number;
  /** DescribeUpdate answers InProgress this many times before the update's final status. */
  readonly updatePolls?: number;
  /** DescribeInstances page size, whatever MaxResults asks, so that small groups still page. */
  readonly pageSize?: number;
  /** Kubernetes: the node registers this long after EC2 running, and is Ready later (see kube). */
  readonly registerMs?: number;
  readonly kubeReadyMs?: number;
  readonly gpusPerNode?: number;
  /** The EC2 type its instances are listed with (default g4dn.12xlarge). */
  readonly instanceType?: string;
  /**
   * DescribeNodegroup names no instanceTypes, as for a group whose launch template sets the type
   * (default: it names the group's type, as for infra/gpu-nodegroup.ts's).
   */
  readonly typeInLaunchTemplate?: boolean;
  /** The zones of the group's subnets (default emulated-asg.ts ZONES, three). */
  readonly zones?: readonly string[];
  /** How long EKS's hook drains an instance AZRebalance terminates (default 0). */
  readonly rebalanceHookMs?: number;
  /**
   * How long DescribeNodegroup's desiredSize lags a change made on the Auto Scaling group (a terminate
   * with decrement, a size set there by hand): EKS syncs the group's size into its own view (default 0).
   * Its own UpdateNodegroupConfig shows at once.
   */
  readonly eksDesiredLagMs?: number;
}

export type EmulatedOperation =
  | 'DescribeNodegroup'
  | 'UpdateNodegroupConfig'
  | 'DescribeUpdate'
  | 'DescribeInstances'
  | 'TerminateInstanceInAutoScalingGroup'
  | 'DescribeAutoScalingInstances'
  | 'DescribeAutoScalingGroups'
  | 'SetInstanceProtection'
  | 'SuspendProcesses'
  | 'DescribeScalingActivities';

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

/** Launch failures within this window show as a health issue of the node group, as EKS reports them. */
const HEALTH_WINDOW_MS = 10 * 60_000;

/**
 * An EKS managed node group behind aws-sdk-client-mock, behaving as AWS does: DescribeNodegroup (status,
 * health.issues, resources.autoScalingGroups), UpdateNodegroupConfig (idempotency tokens, bounds
 * validation, ResourceInUseException while an update is in progress), DescribeUpdate, ListNodegroups; its
 * Auto Scaling group (emulated-asg.ts: default termination policy, TerminateInstanceInAutoScalingGroup,
 * scale-in protection, launch failures that leave the update Successful); EC2 DescribeInstances with its
 * filters; and the Kubernetes Node each instance becomes some time after EC2 running (emulated-kube-nodes.ts).
 */
export function emulateNodegroup(options: EmulatedNodegroupOptions) {
  const { clock, bootMs = 60_000, pageSize = 2 } = options;
  const eks = new EKSClient({ region: 'us-east-1' });
  const ec2 = new EC2Client({ region: 'us-east-1' });
  const autoscaling = new AutoScalingClient({ region: 'us-east-1' });
  const eksMock = mockClient(eks);
  const ec2Mock = mockClient(ec2);
  const asgMock = mockClient(autoscaling);
  let generation = 1;
  const shutdownMs = options.shutdownMs ?? 30_000;
  const asgOptions = {
    shutdownMs,
    ...(options.zones ? { zones: options.zones } : {}),
    ...(options.rebalanceHookMs !== undefined ? { rebalanceHookMs: options.rebalanceHookMs } : {}),
  };
  const nodegroup = {
    name: NODEGROUP,
    arn: `arn:aws:eks:us-east-1:123456789012:nodegroup/${CLUSTER}/${NODEGROUP}/uuid-1`,
    modifiedAt: clock.now() - 86_400_000,
    asg: new EmulatedAsg(
      `eks-${NODEGROUP}-uuid-1`,
      clock,
      options.minSize,
      options.maxSize,
      options.desiredSize ?? options.minSize,
      asgOptions,
    ),
  };
  /** Every ASG the node group ever had (a replaced group's instances stay visible while they shut down). */
  const asgs: Array<{ asg: EmulatedAsg; nodegroupName: string; instanceType?: string }> = [
    {
      asg: nodegroup.asg,
      nodegroupName: NODEGROUP,
      ...(options.instanceType ? { instanceType: options.instanceType } : {}),
    },
  ];
  nodegroup.asg.step(clock.now() - 3_600_000);
  /** The groups replaced and not yet deleted (replace with keepOld): still listed and described. */
  const replaced: OtherGroup[] = [];
  /** The tags of boa's groups, the current one and those replaced (tagGroups adds to them). */
  const deploymentTags: Record<string, string> = { ...STACK_TAGS };
  /** Groups beside boa's (addGroup): another stack's, one not boa's, the system group. */
  const others: OtherGroup[] = [];
  /** Replaced groups EKS is deleting (deleteReplaced with drainMs): listed, DELETING, until their drain ends. */
  const deleting = new Map<OtherGroup, number>();
  /**
   * The replaced groups are deleted (CloudFormation's cleanup): their instances shut down. `drainMs`: as
   * EKS does it, each is held in Terminating:Wait (EC2 running, paid) while its Node is drained, and the
   * group stays listed as DELETING meanwhile; without it, they shut down at once and the group is gone.
   */
  const deleteReplaced = (options: { drainMs?: number } = {}) => {
    const drainMs = options.drainMs ?? 0;
    for (const group of replaced.splice(0)) {
      const old = group.asg;
      old.desiredCapacity = 0;
      old.minSize = 0;
      for (const i of old.live()) old.setProtection([i.id], false);
      const draining = old.live();
      old.step();
      if (drainMs <= 0) continue;
      for (const i of draining) i.hookUntil = clock.now() + drainMs;
      deleting.set(group, clock.now() + drainMs);
    }
  };
  /** The cluster's groups other than the current one, as EKS lists them now. */
  const otherGroups = () => [
    ...replaced,
    ...[...deleting].filter(([, until]) => clock.now() < until).map(([group]) => group),
    ...others,
  ];
  /** Instances detached from the group's ASG by hand (DetachInstances): EC2 and Kubernetes still have them. */
  const detached: Array<{ asg: EmulatedAsg; nodegroupName: string; instances: EmulatedInstance[] }> = [];
  const kube = new EmulatedKubeNodes(clock, {
    bootMs,
    registerMs: options.registerMs ?? 0,
    readyMs: options.kubeReadyMs ?? 0,
    // An instance of a type given (the group's, or a replacement's) has that type's GPUs.
    gpus: (i) => {
      const type = asgs.find((a) => a.asg.instances.includes(i))?.instanceType;
      return (type ? instanceTypeFacts(type)?.gpus : undefined) ?? options.gpusPerNode ?? 4;
    },
    instances: () => [...asgs.flatMap((a) => a.asg.instances), ...detached.flatMap((d) => d.instances)],
    ec2State: (i) => ownerOf(i).ec2State(i, bootMs),
  });
  const ownerOf = (instance: EmulatedInstance) =>
    (asgs.find((a) => a.asg.instances.includes(instance)) ?? asgs[0])!.asg;
  const updates = new Map<string, EmulatedUpdate>();
  const tokens = new Map<string, string>();
  let updatePolls = options.updatePolls ?? 1;
  /** EKS's view of the desired size, when it lags the ASG's (eksDesiredLagMs). */
  const eksView = { shown: options.desiredSize ?? options.minSize, asgSeen: NaN, asgChangedAt: 0 };
  const eksDesiredSize = (asg: EmulatedAsg): number => {
    const lag = options.eksDesiredLagMs ?? 0;
    if (lag <= 0) return asg.desiredCapacity;
    if (asg.desiredCapacity !== eksView.asgSeen) {
      eksView.asgSeen = asg.desiredCapacity;
      eksView.asgChangedAt = clock.now();
    }
    if (clock.now() - eksView.asgChangedAt >= lag) eksView.shown = asg.desiredCapacity;
    return eksView.shown;
  };
  let finalStatus: EmulatedUpdate['finalStatus'] = 'Successful';
  const pageRequests: { NextToken?: string; MaxResults?: number }[] = [];
  const failures = new Map<EmulatedOperation, InjectedFailure[]>();
  const failNow = (operation: EmulatedOperation, afterApply: boolean) => {
    const queue = failures.get(operation) ?? [];
    if (queue.length === 0 || queue[0]?.afterApply !== afterApply) return;
    const error = queue.shift()?.error;
    if (error) throw error;
  };
  /**
   * A version or AMI update EKS is applying (startVersionUpdate): what it surged the group by, and the
   * group's maximum and desired size before it (its scale-down phase returns to them).
   */
  let versionUpdate: { surge: number; maxSize: number; desiredSize: number } | undefined;
  const inProgress = () => versionUpdate !== undefined || [...updates.values()].some((u) => u.pollsLeft > 0);
  const step = () => {
    for (const a of asgs) a.asg.step();
  };
  const notFound = (name: string) =>
    new ResourceNotFoundException({ message: `No node group found for name: ${name}.`, $metadata: {} });
  const asgFault = (error: unknown) => {
    if (error instanceof AsgError) {
      throw Object.assign(new Error(error.message), { name: error.name, $fault: 'client', $metadata: {} });
    }
    throw error;
  };

  eksMock.on(DescribeNodegroupCommand).callsFake((input) => {
    failNow('DescribeNodegroup', false);
    step();
    if (input.nodegroupName !== nodegroup.name) {
      const other = otherGroups().find((g) => g.name === input.nodegroupName);
      if (other) return { nodegroup: describeOther(other) };
      throw notFound(input.nodegroupName);
    }
    const { asg } = nodegroup;
    const failed = asg.recentFailures(HEALTH_WINDOW_MS);
    const issues = failed.length
      ? [{ code: 'AsgInstanceLaunchFailures', message: failed.at(-1)?.message, resourceIds: [asg.name] }]
      : [];
    return {
      nodegroup: {
        clusterName: CLUSTER,
        nodegroupName: nodegroup.name,
        nodegroupArn: nodegroup.arn,
        status: versionUpdate ? 'UPDATING' : issues.length ? 'DEGRADED' : 'ACTIVE',
        labels: ROLE_LABEL,
        tags: deploymentTags,
        scalingConfig: { minSize: asg.minSize, maxSize: asg.maxSize, desiredSize: eksDesiredSize(asg) },
        modifiedAt: new Date(nodegroup.modifiedAt),
        resources: { autoScalingGroups: [{ name: asg.name }] },
        health: { issues },
        ...(options.typeInLaunchTemplate
          ? {}
          : { instanceTypes: [asgs.find((a) => a.asg === asg)?.instanceType ?? 'g4dn.12xlarge'] }),
      },
    };
  });

  const describeOther = (group: OtherGroup) => ({
    clusterName: CLUSTER,
    nodegroupName: group.name,
    nodegroupArn: group.arn,
    status: deleting.has(group) ? 'DELETING' : 'ACTIVE',
    labels: group.labels,
    tags: group.tags,
    scalingConfig: {
      minSize: group.asg.minSize,
      maxSize: group.asg.maxSize,
      desiredSize: group.asg.desiredCapacity,
    },
    resources: { autoScalingGroups: [{ name: group.asg.name }] },
    health: { issues: [] },
  });

  eksMock.on(ListNodegroupsCommand).callsFake(() => ({
    // A group replaced under its own name is the new one to EKS (names are unique in a cluster).
    nodegroups: [...new Set([nodegroup.name, ...otherGroups().map((g) => g.name)])],
  }));

  eksMock.on(UpdateNodegroupConfigCommand).callsFake((input) => {
    failNow('UpdateNodegroupConfig', false);
    if (input.nodegroupName !== nodegroup.name) throw notFound(input.nodegroupName);
    const token: string | undefined = input.clientRequestToken;
    const seen = token && tokens.get(token);
    if (seen) return { update: { id: seen, status: 'InProgress', type: 'ConfigUpdate' } };
    if (inProgress()) {
      throw new ResourceInUseException({ message: 'an update is in progress', $metadata: {} });
    }
    const { asg } = nodegroup;
    // As EKS: a config without a desired size (the bounds handler's) keeps the current one.
    const desired: number = input.scalingConfig.desiredSize ?? asg.desiredCapacity;
    const min = input.scalingConfig.minSize ?? asg.minSize;
    const max = input.scalingConfig.maxSize ?? asg.maxSize;
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
      Object.assign(asg, { minSize: min, maxSize: max, desiredCapacity: desired });
      Object.assign(eksView, { shown: desired, asgSeen: desired, asgChangedAt: clock.now() });
      nodegroup.modifiedAt = clock.now();
      asg.step();
    }
    failNow('UpdateNodegroupConfig', true);
    return { update: { id, status: 'InProgress', type: 'ConfigUpdate' } };
  });

  eksMock.on(DescribeUpdateCommand).callsFake((input) => {
    failNow('DescribeUpdate', false);
    const update = updates.get(input.updateId);
    if (!update)
      throw new ResourceNotFoundException({
        message: `No update found for id: ${input.updateId}.`,
        $metadata: {},
      });
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

  const asgNamed = (name: string | undefined) => asgs.find((a) => a.asg.name === name)?.asg;

  // Instances on their way out are listed, Terminating, until EC2 has them gone.
  asgMock.on(DescribeAutoScalingGroupsCommand).callsFake((input) => {
    failNow('DescribeAutoScalingGroups', false);
    step();
    const found = (input.AutoScalingGroupNames ?? []).flatMap((n: string) => asgNamed(n) ?? []);
    return {
      AutoScalingGroups: found.map((asg: EmulatedAsg) => ({
        AutoScalingGroupName: asg.name,
        MinSize: asg.minSize,
        MaxSize: asg.maxSize,
        DesiredCapacity: asg.desiredCapacity,
        // As EKS sets it: a numbered version of its own template, the new one from an update's start.
        LaunchTemplate: { LaunchTemplateName: 'eks-gpu', Version: String(asg.templateVersion) },
        AvailabilityZones: [...(options.zones ?? ZONES)],
        SuspendedProcesses: [...asg.suspendedProcesses].map((p) => ({
          ProcessName: p,
          SuspensionReason: 'User suspended at 2026-12-01T00:00:00Z',
        })),
        Instances: asg.instances
          .filter((i) => asg.ec2State(i, bootMs) !== 'terminated')
          .map((i) => ({
            InstanceId: i.id,
            AvailabilityZone: i.zone,
            LifecycleState:
              asg.leavingState(i) ??
              (i.standby ? 'Standby' : asg.ec2State(i, bootMs) === 'pending' ? 'Pending' : 'InService'),
            HealthStatus: 'Healthy',
            ProtectedFromScaleIn: i.protectedFromScaleIn,
            LaunchTemplate: { LaunchTemplateName: 'eks-gpu', Version: String(i.templateVersion) },
            InstanceType: asgs.find((a) => a.asg === asg)?.instanceType ?? 'g4dn.12xlarge',
          })),
      })),
    };
  });

  // A termination activity ends once EC2 has the instance terminated (its hook's wait, then shutting
  // down); a launch's, at once. Newest first, paged by NextToken as AWS does.
  const endOf = (asg: EmulatedAsg | undefined, a: { at: number; description: string }) => {
    const id = /^Terminating EC2 instance: (i-[0-9a-z]+)/.exec(a.description)?.[1];
    if (!id) return a.at;
    const i = asg?.instances.find((x) => x.id === id);
    if (!i || i.terminatedAt === undefined) return undefined;
    const end = (i.hookUntil ?? i.terminatedAt) + shutdownMs;
    return end <= clock.now() ? end : undefined;
  };
  asgMock.on(DescribeScalingActivitiesCommand).callsFake((input) => {
    failNow('DescribeScalingActivities', false);
    step();
    const asg = asgNamed(input.AutoScalingGroupName);
    const all = [...(asg?.activities ?? [])].reverse();
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const size = input.MaxRecords ?? 100;
    const activities = all.slice(start, start + size);
    return {
      Activities: activities.map((a) => {
        const end = endOf(asg, a);
        return {
          ActivityId: a.id,
          AutoScalingGroupName: asg?.name,
          StartTime: new Date(a.at),
          ...(end !== undefined ? { EndTime: new Date(end) } : {}),
          StatusCode: a.status,
          Description: a.description,
          StatusMessage: a.message,
          Cause: a.description,
        };
      }),
      ...(start + size < all.length ? { NextToken: String(start + size) } : {}),
    };
  });

  const terminations: Array<{ instanceId: string; decrement: boolean; at: number }> = [];
  asgMock.on(TerminateInstanceInAutoScalingGroupCommand).callsFake((input) => {
    failNow('TerminateInstanceInAutoScalingGroup', false);
    step();
    const owner =
      asgs.find((a) => a.asg.instances.some((i) => i.id === input.InstanceId && i.terminatedAt === undefined))
        ?.asg ?? nodegroup.asg;
    let activity;
    try {
      activity = owner.terminateInstance(input.InstanceId, input.ShouldDecrementDesiredCapacity);
    } catch (error) {
      return asgFault(error);
    }
    terminations.push({
      instanceId: input.InstanceId,
      decrement: input.ShouldDecrementDesiredCapacity,
      at: clock.now(),
    });
    failNow('TerminateInstanceInAutoScalingGroup', true);
    return {
      Activity: { ActivityId: activity.id, StatusCode: 'InProgress', Description: activity.description },
    };
  });

  // A live instance is InService; one terminated is Terminating while it shuts down (shutdownMs, or a
  // replacement's hook: EKS's lifecycle hook holds it in Terminating:Wait meanwhile), then has left the group.
  asgMock.on(DescribeAutoScalingInstancesCommand).callsFake((input) => {
    failNow('DescribeAutoScalingInstances', false);
    const ids = new Set(input.InstanceIds ?? []);
    return {
      AutoScalingInstances: asgs.flatMap((a) =>
        a.asg.instances
          .filter((i) => ids.has(i.id) && a.asg.ec2State(i, bootMs) !== 'terminated')
          .map((i) => ({
            InstanceId: i.id,
            LifecycleState:
              i.terminatedAt !== undefined ? 'Terminating:Wait' : i.standby ? 'Standby' : 'InService',
            AutoScalingGroupName: a.asg.name,
          })),
      ),
    };
  });

  asgMock.on(SetInstanceProtectionCommand).callsFake((input) => {
    failNow('SetInstanceProtection', false);
    const asg = asgNamed(input.AutoScalingGroupName);
    if (!asg)
      return asgFault(
        new AsgError('ValidationError', `AutoScalingGroup name not found: ${input.AutoScalingGroupName}`),
      );
    try {
      asg.setProtection(input.InstanceIds ?? [], input.ProtectedFromScaleIn);
    } catch (error) {
      return asgFault(error);
    }
    return {};
  });

  // A new ASG (a replaced node group) starts with none suspended: EKS does not suspend any.
  const processCall =
    (resume: boolean) => (input: { AutoScalingGroupName?: string; ScalingProcesses?: string[] }) => {
      if (!resume) failNow('SuspendProcesses', false);
      const asg = asgNamed(input.AutoScalingGroupName);
      if (!asg)
        return asgFault(
          new AsgError('ValidationError', `AutoScalingGroup name not found - ${input.AutoScalingGroupName}`),
        );
      if (resume) asg.resume(input.ScalingProcesses);
      else asg.suspend(input.ScalingProcesses);
      if (!resume) failNow('SuspendProcesses', true);
      return {};
    };
  asgMock.on(SuspendProcessesCommand).callsFake(processCall(false));
  asgMock.on(ResumeProcessesCommand).callsFake(processCall(true));

  const matches = (filters: Filter[] | undefined, values: Record<string, string>) =>
    (filters ?? []).every((f) => {
      const value = values[f.Name ?? ''];
      return value === undefined || (f.Values ?? []).includes(value);
    });

  ec2Mock.on(DescribeInstancesCommand).callsFake((input) => {
    failNow('DescribeInstances', false);
    step();
    // Copied now: the SDK's paginator reuses one input object, so recorded calls show only its last token.
    pageRequests.push({ NextToken: input.NextToken, MaxResults: input.MaxResults });
    const sources = [...asgs.map((a) => ({ ...a, instances: a.asg.instances })), ...detached];
    const all = sources.flatMap(({ asg, nodegroupName, instances }) =>
      instances.flatMap((i) => {
        const state = asg.ec2State(i, bootMs);
        const values = {
          'tag:eks:cluster-name': CLUSTER,
          'tag:eks:nodegroup-name': nodegroupName,
          'instance-state-name': state,
        };
        const instanceType = asgs.find((a) => a.asg === asg)?.instanceType ?? 'g4dn.12xlarge';
        return state === 'terminated' || !matches(input.Filters, values)
          ? []
          : [{ i, state, nodegroupName, asgName: asg.name, instanceType }];
      }),
    );
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const page: Instance[] = all
      .slice(start, start + pageSize)
      .map(({ i, state, nodegroupName, asgName, instanceType }) => ({
        InstanceId: i.id,
        Tags: [
          { Key: 'eks:cluster-name', Value: CLUSTER },
          { Key: 'eks:nodegroup-name', Value: nodegroupName },
          { Key: 'aws:autoscaling:groupName', Value: asgName },
        ],
        InstanceType: instanceType as Instance['InstanceType'],
        LaunchTime: new Date(i.launchedAt),
        Placement: { AvailabilityZone: i.zone },
        State: { Name: state },
      }));
    const next = start + pageSize < all.length ? String(start + pageSize) : undefined;
    return { Reservations: [{ Instances: page }], NextToken: next };
  });

  return {
    eks,
    ec2,
    autoscaling,
    eksMock,
    ec2Mock,
    asgMock,
    kube,
    /** The current node group's scaling state (its ASG's). */
    group: {
      get minSize() {
        return nodegroup.asg.minSize;
      },
      get maxSize() {
        return nodegroup.asg.maxSize;
      },
      get desiredSize() {
        return nodegroup.asg.desiredCapacity;
      },
      get name() {
        return nodegroup.name;
      },
    },
    get asg() {
      return nodegroup.asg;
    },
    /** Every instance EC2 runs (billed), of any group: replaced ones and detached ones too. */
    get running() {
      step();
      const sources = [...asgs.map((a) => ({ asg: a.asg, instances: a.asg.instances })), ...detached];
      return sources.flatMap(({ asg, instances }) =>
        instances.filter((i) => asg.ec2State(i, bootMs) === 'running'),
      );
    },
    /** Live instances of the current group (launching or in service), oldest first. */
    get instances() {
      step();
      return nodegroup.asg.live();
    },
    updates,
    /** Successful TerminateInstanceInAutoScalingGroup calls. */
    terminations,
    /** DescribeInstances requests as they were when sent. */
    pageRequests,
    /** An instance attached to the group by hand (AttachInstances, which raises the desired capacity). */
    addInstance(instance: { id: string; launchedAt: number; zone?: string }) {
      nodegroup.asg.desiredCapacity += 1;
      nodegroup.asg.instances.push({
        zone: options.zones?.[0] ?? 'us-east-1a',
        templateVersion: nodegroup.asg.templateVersion,
        protectedFromScaleIn: false,
        ...instance,
      });
    },
    /**
     * DetachInstances by hand (to debug a node, say): the instance leaves the ASG, keeps running with the
     * node group's tags (EC2 lists it) and its Node; with `decrement` the desired size goes down with it,
     * without, the ASG launches a replacement.
     */
    detachInstance(instanceId: string, decrement: boolean) {
      const { asg } = nodegroup;
      const index = asg.instances.findIndex((i) => i.id === instanceId && i.terminatedAt === undefined);
      if (index < 0) throw new Error(`no live instance ${instanceId}`);
      const [instance] = asg.instances.splice(index, 1);
      detached.push({ asg, nodegroupName: nodegroup.name, instances: [instance!] });
      if (decrement) asg.desiredCapacity -= 1;
      asg.step();
    },
    /** Another actor (the console, say) changes the group's bounds. */
    setBounds(minSize: number, maxSize: number) {
      Object.assign(nodegroup.asg, { minSize, maxSize });
      nodegroup.modifiedAt = clock.now();
    },
    /** Another actor (the console, the bounds Lambda) sets the desired size. */
    setDesiredOutside(desiredSize: number) {
      nodegroup.asg.desiredCapacity = desiredSize;
      nodegroup.modifiedAt = clock.now();
      nodegroup.asg.step();
    },
    /** EC2 can run at most this many instances of the type (InsufficientInstanceCapacity beyond). */
    setCapacity(instances: number) {
      nodegroup.asg.capacity = instances;
    },
    /** A new launch template version (an AMI update): the default policy removes older ones first. */
    bumpLaunchTemplate() {
      nodegroup.asg.templateVersion += 1;
    },
    /**
     * The node group is replaced (an instance-type change in the infra): a new name, ARN and ASG at the
     * same size; the old group's instances shut down. `keepOld`: as CloudFormation does it, the new group
     * starts at 0 and the old one keeps its instances (paid) until deleteReplaced(), its cleanup phase.
     * `instanceType`: the new group's (EC2 lists its instances with it; g4dn.12xlarge before).
     */
    replace(newName: string, options: { keepOld?: boolean; instanceType?: string } = {}) {
      generation += 1;
      const old = nodegroup.asg;
      const oldGroup = { name: nodegroup.name, arn: nodegroup.arn, asg: old };
      const asg = new EmulatedAsg(
        `eks-${newName}-uuid-${generation}`,
        clock,
        old.minSize,
        old.maxSize,
        options.keepOld ? 0 : old.desiredCapacity,
        { ...asgOptions, idPrefix: `${generation}` },
      );
      asgs.push({
        asg,
        nodegroupName: newName,
        ...(options.instanceType ? { instanceType: options.instanceType } : {}),
      });
      Object.assign(nodegroup, {
        name: newName,
        arn: `arn:aws:eks:us-east-1:123456789012:nodegroup/${CLUSTER}/${newName}/uuid-${generation}`,
        modifiedAt: clock.now(),
        asg,
      });
      asg.step();
      replaced.push({ ...oldGroup, labels: ROLE_LABEL, tags: deploymentTags });
      if (!options.keepOld) deleteReplaced();
    },
    deleteReplaced,
    /** More tags on boa's groups, current and replaced (those CloudFormation adds, say). */
    tagGroups(tags: Record<string, string>) {
      Object.assign(deploymentTags, tags);
    },
    /**
     * Another node group in the cluster with `instances` running (launched an hour earlier), its own
     * labels and tags: another stack's, one not boa's. Its instances carry its name (eks:nodegroup-name).
     */
    addGroup(
      name: string,
      group: { labels: Record<string, string>; tags: Record<string, string>; instances: number },
    ) {
      generation += 1;
      const asg = new EmulatedAsg(`eks-${name}-uuid-${generation}`, clock, 0, 8, group.instances, {
        ...asgOptions,
        idPrefix: `${generation}`,
      });
      asg.step(clock.now() - 3_600_000);
      asgs.push({ asg, nodegroupName: name });
      const arn = `arn:aws:eks:us-east-1:123456789012:nodegroup/${CLUSTER}/${name}/uuid-${generation}`;
      others.push({ name, arn, asg, labels: group.labels, tags: group.tags });
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
    /** Injected failures of `operation` not yet used are dropped: its calls succeed again. */
    clearFailures(operation: EmulatedOperation) {
      failures.delete(operation);
    },
    /**
     * A managed node group version (or AMI) update, as EKS runs it: the ASG's maximum and desired size go
     * up by `surge` and new instances launch from a new launch template; the group is UPDATING and
     * refuses config updates meanwhile.
     */
    startVersionUpdate(surge: number) {
      const { asg } = nodegroup;
      versionUpdate = { surge, maxSize: asg.maxSize, desiredSize: asg.desiredCapacity };
      asg.templateVersion += 1;
      asg.maxSize += surge;
      asg.desiredCapacity += surge;
      asg.step();
    },
    /**
     * The update's last phases, as EKS documents them
     * (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html). Upgrade: each
     * instance of the old template is drained and terminated, the group launching its replacement
     * (EKS raised the desired size for them). Scale down: the maximum and desired size are decremented
     * one at a time back to their values before the update, never raised: a desired size lowered
     * meanwhile (Cluster Autoscaler, boa) stays where it is. `Failed` (NodeCreationFailure, the group left
     * as it is, ACTIVE) when old instances remain with no instance of the new template to move to: the
     * scale-up phase waits for new nodes to be Ready, and someone terminated them all.
     */
    finishVersionUpdate(): 'Successful' | 'Failed' {
      const { asg } = nodegroup;
      const before = versionUpdate;
      versionUpdate = undefined;
      asg.step();
      const old = asg.live().filter((i) => i.templateVersion < asg.templateVersion);
      if (old.length > 0 && old.length === asg.live().length) return 'Failed';
      for (const i of old) asg.terminateInstance(i.id, false);
      while (before && asg.desiredCapacity > before.desiredSize) asg.desiredCapacity -= 1;
      while (before && asg.maxSize > before.maxSize) asg.maxSize -= 1;
      asg.step();
      return 'Successful';
    },
    setUpdatePolls(polls: number) {
      updatePolls = polls;
    },
    failNextUpdates() {
      finalStatus = 'Failed';
    },
    /** Updates succeed again (after failNextUpdates: the capacity came back, say). */
    succeedNextUpdates() {
      finalStatus = 'Successful';
    },
    updateCalls: () => eksMock.commandCalls(UpdateNodegroupConfigCommand),
    /** The desired sizes sent (UpdateNodegroupConfig), in order. */
    sizesSent: () =>
      eksMock
        .commandCalls(UpdateNodegroupConfigCommand)
        .map((c) => c.args[0].input.scalingConfig?.desiredSize as number),
  };
}

export type EmulatedNodegroup = ReturnType<typeof emulateNodegroup>;

/** An EksNodePool over the emulated group with its Auto Scaling client, on the given clock and sleep. */
export function poolOverEmulated(
  ng: EmulatedNodegroup,
  time: { readonly clock: Clock; readonly sleep: (ms: number) => Promise<void> },
  logger: Logger,
  /** The group the pool is configured with: CloudFormation points boa at a new one on a replacement. */
  nodegroupName = NODEGROUP,
  /** The configured type's GPUs (4: g4dn.12xlarge, the emulated instances' type unless replaced). */
  gpusPerNode = 4,
): EksNodePool {
  return new EksNodePool(
    { clusterName: CLUSTER, nodegroupName, gpusPerNode },
    {
      eks: ng.eks,
      ec2: ng.ec2,
      autoscaling: ng.autoscaling,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0.5,
      logger,
    },
  );
}
