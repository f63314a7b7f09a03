import {
  type AutoScalingClient,
  DescribeAutoScalingGroupsCommand,
  type DescribeAutoScalingGroupsCommandOutput,
  DescribeAutoScalingInstancesCommand,
  SetInstanceProtectionCommand,
  SuspendProcessesCommand,
  TerminateInstanceInAutoScalingGroupCommand,
} from '@aws-sdk/client-auto-scaling';
import type { TerminateResult } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { activitiesSince } from './asg-activities.ts';
import { AwsCallError, withRetry } from './retry.ts';

/**
 * The Auto Scaling calls behind an EKS managed node group, as Cluster Autoscaler makes them: boa picks
 * the instance to remove and terminates it with the desired capacity lowered, instead of lowering the
 * desired size and letting the ASG's termination policy pick (often a busy node).
 */

export interface AsgContext extends RetryContext {
  readonly autoscaling: AutoScalingClient;
}

/** The ASG's answer when the instance is not (any more) one of its own. */
const NOT_IN_GROUP = /Instance Id not found|not part of Auto Scaling group|No managed instance found/i;
/** Decrementing would take the group below its minimum: the ASG must replace the instance instead. */
const BELOW_MIN = /min size constraint/i;

function awsMessage(error: unknown): string {
  return error instanceof AwsCallError ? String((error.cause as Error | undefined)?.message ?? '') : '';
}

/** Lifecycle states of an instance on its way out of the group (a lifecycle hook's wait included). */
const LEAVING = /^Terminat/;
/** Lifecycle states of an instance the group has that do not count toward its capacity. */
const OUT_OF_SERVICE = /^(EnteringStandby|Standby|Detaching|Detached)/;

/** The instance's lifecycle state in its group (InService, Terminating:Wait, ...); undefined: not in it. */
async function lifecycleOf(instanceId: string, ctx: AsgContext): Promise<string | undefined> {
  const out = await ctx.autoscaling.send(
    new DescribeAutoScalingInstancesCommand({ InstanceIds: [instanceId] }),
  );
  return out?.AutoScalingInstances?.find((i) => i.InstanceId === instanceId)?.LifecycleState;
}

/** What one DescribeAutoScalingGroups says of the group. */
export interface AsgView {
  /**
   * The instances of the group that are on their way out, whoever sent them: the ASG's own replacements
   * (a failed health check, AZ rebalancing) and scale-ins sit in Terminating:Wait while EKS's lifecycle
   * hook drains them, EC2 still `running` and paid, for minutes.
   */
  readonly leaving: Set<string>;
  /**
   * The instances that count toward the group's capacity: all it has but those in Standby or being
   * detached; undefined when the answer did not have the group. An instance EC2 runs with the group's
   * tags and this lacks was detached or put in Standby by hand.
   */
  readonly members: Set<string> | undefined;
  /** The group's suspended processes; undefined when the answer did not have the group. */
  readonly suspended: readonly string[] | undefined;
  /**
   * Instances launched from an earlier launch template version than the group's: the ones an EKS node
   * group update drains and replaces (it sets the group to the new version first). Empty when the group
   * names no version number ($Latest, $Default: nothing to compare).
   */
  readonly outdated: Set<string>;
}

/** One DescribeAutoScalingGroups call: the group's leaving instances and suspended processes. */
export async function describeAsg(autoScalingGroupName: string, ctx: AsgContext): Promise<AsgView> {
  const out = await withRetry(
    'DescribeAutoScalingGroups',
    () =>
      ctx.autoscaling.send(
        new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [autoScalingGroupName] }),
      ),
    ctx,
  );
  const group = (out?.AutoScalingGroups ?? []).find((g) => g.AutoScalingGroupName === autoScalingGroupName);
  const instances = group?.Instances ?? [];
  const leaving = new Set(
    instances.flatMap((i) => (i.InstanceId && LEAVING.test(i.LifecycleState ?? '') ? [i.InstanceId] : [])),
  );
  const suspended = group
    ? (group.SuspendedProcesses ?? []).flatMap((p) => (p.ProcessName ? [p.ProcessName] : []))
    : undefined;
  const members = group
    ? new Set(
        instances.flatMap((i) =>
          i.InstanceId && !OUT_OF_SERVICE.test(i.LifecycleState ?? '') ? [i.InstanceId] : [],
        ),
      )
    : undefined;
  return { leaving, members, suspended, outdated: outdatedInstances(group) };
}

type Group = NonNullable<DescribeAutoScalingGroupsCommandOutput['AutoScalingGroups']>[number];

type TemplateSpec = { LaunchTemplateId?: string; LaunchTemplateName?: string; Version?: string };

/** AsgView.outdated. */
export function outdatedInstances(group: Group | undefined): Set<string> {
  const spec =
    group?.LaunchTemplate ?? group?.MixedInstancesPolicy?.LaunchTemplate?.LaunchTemplateSpecification;
  if (!group || !spec?.Version || !/^\d+$/.test(spec.Version)) return new Set();
  return new Set(
    (group.Instances ?? []).flatMap((i) => {
      const own = i.LaunchTemplate;
      const other = own !== undefined && (own.Version !== spec.Version || !sameTemplate(own, spec));
      return i.InstanceId && other ? [i.InstanceId] : [];
    }),
  );
}

/**
 * By id when both name one, else by name: one side naming only the name and the other the id too is
 * the same template (compared id against name, every instance was outdated).
 */
function sameTemplate(a: TemplateSpec, b: TemplateSpec): boolean {
  if (a.LaunchTemplateId && b.LaunchTemplateId) return a.LaunchTemplateId === b.LaunchTemplateId;
  if (a.LaunchTemplateName && b.LaunchTemplateName) return a.LaunchTemplateName === b.LaunchTemplateName;
  return true;
}

/** SuspendProcesses of these processes on the group (a no-op for ones suspended already). */
export async function suspendProcesses(
  autoScalingGroupName: string,
  processes: readonly string[],
  ctx: AsgContext,
): Promise<void> {
  await withRetry(
    'SuspendProcesses',
    () =>
      ctx.autoscaling.send(
        new SuspendProcessesCommand({
          AutoScalingGroupName: autoScalingGroupName,
          ScalingProcesses: [...processes],
        }),
      ),
    ctx,
  );
}

/** An IAM refusal: a boa upgraded without its stack redeployed lacks a newer Describe permission. */
export function refused(error: unknown): boolean {
  const cause = (error instanceof AwsCallError ? error.cause : error) as { name?: string } | undefined;
  return /AccessDenied|UnauthorizedOperation/.test(cause?.name ?? '');
}

/**
 * TerminateInstanceInAutoScalingGroup(ShouldDecrementDesiredCapacity: true) for each instance, one at a
 * time. It lowers the desired size, so it must never be sent twice for one instance: an instance the
 * group no longer has, or has on its way out (Terminating:Wait while EKS drains it: a repeat after a
 * crash), is reported as already gone and nothing is sent; a retry (a timeout whose call AWS may have
 * applied) first reads the instance again, and one already leaving was terminated by the first send.
 * Where decrementing would break the group's minimum, the instance is terminated without decrementing
 * and the ASG launches its replacement (a node that never became ready, say): reported as `replaced`.
 */
export async function terminateInstances(
  instanceIds: readonly string[],
  ctx: AsgContext,
): Promise<TerminateResult> {
  const terminated: string[] = [];
  const replaced: string[] = [];
  const alreadyGone: string[] = [];
  for (const instanceId of new Set(instanceIds)) {
    let outOfService = false;
    // Gone, on its way out, or taken out of service by hand (Standby, detaching): not boa's to terminate.
    // One in Standby is left as the listing leaves it (eks-node-pool.ts outsideGroup): terminated with a
    // decrement, the removal boa chose before it went into Standby lowered the desired size a second
    // time, on top of EnterStandby's own decrement, and the group lost a node it was asked to keep.
    const leaving = async () => {
      try {
        const state = await lifecycleOf(instanceId, ctx);
        outOfService = state !== undefined && OUT_OF_SERVICE.test(state);
        return state === undefined || LEAVING.test(state) || outOfService;
      } catch (error) {
        // Unreadable, the Terminate goes out as it did before the read existed (its "not in the
        // group" answer still stops a repeat), rather than no node ever being removed.
        if (!refused(error)) throw error;
        ctx.logger.warn(
          { event: 'node.lifecycle-unreadable', instanceId, error: (error as Error).message },
          'cannot read the instance lifecycle (autoscaling:DescribeAutoScalingInstances: redeploy the stack); terminating without it',
        );
        return false;
      }
    };
    const send = (decrement: boolean) => {
      let attempts = 0;
      return withRetry(
        'TerminateInstanceInAutoScalingGroup',
        async () => {
          if (attempts++ > 0 && (await leaving())) return { Activity: undefined };
          return ctx.autoscaling.send(
            new TerminateInstanceInAutoScalingGroupCommand({
              InstanceId: instanceId,
              ShouldDecrementDesiredCapacity: decrement,
            }),
          );
        },
        ctx,
      );
    };
    if (await withRetry('DescribeAutoScalingInstances', leaving, ctx)) {
      alreadyGone.push(instanceId);
      if (outOfService)
        ctx.logger.warn(
          { event: 'node.out-of-service', instanceId },
          'instance put in Standby or being detached (by hand?): not terminated by boa, and paid while it runs',
        );
      else
        ctx.logger.info(
          { event: 'node.already-gone', instanceId },
          'instance already left the group, or is leaving',
        );
      continue;
    }
    try {
      const out = await send(true);
      terminated.push(instanceId);
      ctx.logger.info(
        { event: 'node.terminate-sent', instanceId, activityId: out.Activity?.ActivityId, decrement: true },
        'instance terminated',
      );
    } catch (error) {
      const message = awsMessage(error);
      if (NOT_IN_GROUP.test(message)) {
        alreadyGone.push(instanceId);
        ctx.logger.info({ event: 'node.already-gone', instanceId }, 'instance already left the group');
      } else if (BELOW_MIN.test(message)) {
        await send(false);
        replaced.push(instanceId);
        ctx.logger.info(
          { event: 'node.terminate-sent', instanceId, decrement: false, reason: 'minSize' },
          'instance terminated; the group replaces it',
        );
      } else {
        throw error;
      }
    }
  }
  return { terminated, alreadyGone, ...(replaced.length > 0 ? { replaced } : {}) };
}

/**
 * The ASG's answer when an instance cannot take protection: not in service (Pending, or Terminating:Wait
 * while EKS's lifecycle hook drains it after auto-repair or a node group update), or gone from the group.
 */
const CANNOT_PROTECT = /not in InService|not part of Auto Scaling group|Instance Id not found/i;

/**
 * SetInstanceProtection on the group's instances (at most 50 per call, as the API allows). One instance
 * that cannot take it fails its whole call, so that batch is sent again one instance at a time and such
 * instances are skipped and logged: one on its way out is not the ASG's to pick, and the rest must still
 * be protected before the desired size is lowered.
 */
export async function protectInstances(
  autoScalingGroupName: string,
  instanceIds: readonly string[],
  protect: boolean,
  ctx: AsgContext,
): Promise<void> {
  const send = (ids: string[]) =>
    withRetry(
      'SetInstanceProtection',
      () =>
        ctx.autoscaling.send(
          new SetInstanceProtectionCommand({
            AutoScalingGroupName: autoScalingGroupName,
            InstanceIds: ids,
            ProtectedFromScaleIn: protect,
          }),
        ),
      ctx,
    );
  for (let i = 0; i < instanceIds.length; i += 50) {
    const batch = instanceIds.slice(i, i + 50);
    try {
      await send(batch);
    } catch (error) {
      if (!CANNOT_PROTECT.test(awsMessage(error))) throw error;
      for (const instanceId of batch) {
        try {
          await send([instanceId]);
        } catch (single) {
          const message = awsMessage(single);
          if (!CANNOT_PROTECT.test(message)) throw single;
          ctx.logger.info(
            { event: 'node.protection-skipped', instanceId, protect, reason: message },
            'instance not in service; protection skipped',
          );
        }
      }
    }
  }
}

/** Failed launches since `since` (ms), newest first: what capacity errors look like from the ASG. */
export async function recentLaunchFailures(
  autoScalingGroupName: string,
  since: number,
  ctx: AsgContext,
): Promise<{ at: number; message: string }[]> {
  // Every page since `since`: a busy group's launches and terminations pushed a failure out of the
  // newest 20 activities, the one page this read before (found in review).
  const { activities } = await activitiesSince(autoScalingGroupName, since, ctx);
  return activities.flatMap((a) =>
    a.StatusCode === 'Failed'
      ? [{ at: a.StartTime!.getTime(), message: a.StatusMessage ?? a.Description ?? 'launch failed' }]
      : [],
  );
}
