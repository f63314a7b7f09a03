// Budget guard (Lambda, Node.js, AWS SDK v3 from the runtime), outside boa, run every few minutes: when
// boa's Heartbeat metric has been silent for guardMinutes, lowers the node group's desired size to what
// the budget allows (floor(budget / GPUs per node), never below the group's minimum: a minimum above it
// fails the run, for the error alarm) and no further, and
// publishes GuardTripped so the guard alarm fires. It never raises the desired size. boa protects its busy
// nodes from scale-in before it lowers the desired size itself, and a protected instance is one the Auto
// Scaling group cannot take away, so the guard lifts that protection while it holds the group: boa is not
// there to choose. The running instances of a group the guarded one replaced (an instance-type change,
// until CloudFormation deletes the old group) are paid too: the guarded group is allowed what the budget
// leaves beside their GPUs, at their own instance type's.
// (The real GPU count is AWS's own GroupInServiceInstances, turned on by the CDK app: infra/asg-metrics.ts.)

import console from 'node:console';
import process from 'node:process';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AutoScalingClient,
  DescribeAutoScalingGroupsCommand,
  SetInstanceProtectionCommand,
} from '@aws-sdk/client-auto-scaling';
import {
  CloudWatchClient,
  GetMetricStatisticsCommand,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { DescribeNodegroupCommand, EKSClient, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';

import { replacedInstances } from './replaced-groups.mjs';
import { readSettings } from './settings.mjs';

export { DEPLOYMENT_TAGS, GPU_LABELS, leftoverGroups } from './replaced-groups.mjs';
export { readSettings } from './settings.mjs';

const NAMESPACE = 'boa';

/**
 * While another update holds the node group (ResourceInUseException: an AMI or version update, the bounds
 * handler, boa's last resize), the guard tries again within the run, re-reading the group, instead of
 * failing the run and leaving the group over the budget until the next one, 5 minutes later. 4 attempts
 * 10 s apart stay well within the Lambda's one-minute timeout; a longer update fails the run (its error
 * alarm) and the next run tries again.
 */
export const IN_USE_RETRY = { maxAttempts: 4, delayMs: 10_000 };

/**
 * Whole nodes the budget pays for beside the GPUs of replaced groups' nodes still running (paid too):
 * floor((budget - replacedGpus) / GPUs per node), within the node group's bounds. GPUs, not nodes: a
 * replacement is an instance-type change, and four 4-GPU nodes beside a budget of 16 1-GPU nodes left
 * 12 of them to the new group when they counted as four (found in an operator review).
 */
export function allowedNodes(budget, gpusPerNode, minSize = 0, replacedGpus = 0) {
  return Math.max(minSize, Math.floor((budget - replacedGpus) / gpusPerNode + 1e-9));
}

/**
 * The GPUs per node the guarded group is held to: the most of its instance types' GPUs, as
 * DescribeNodegroup names them and its instances run (a launch template's type shows only there), for
 * the types INSTANCE_TYPE_GPUS knows; the configured GPUS_PER_NODE when none is known. Not the
 * configured count alone: a group changed outside the stack to 4-GPU instances while GPUS_PER_NODE says
 * 1 was held to 4 times the budget's GPUs (found in review). The most, so a mixed group is never under-counted.
 */
export function groupGpusPerNode(settings, nodegroupTypes = [], instanceTypes = []) {
  const known = [...nodegroupTypes, ...instanceTypes].flatMap((type) => {
    const gpus = settings.instanceGpus?.[type];
    return gpus === undefined ? [] : [gpus];
  });
  return known.length > 0 ? Math.max(...known) : settings.gpusPerNode;
}

/**
 * What to do this run: nothing while boa is heard from or the group is within the budget. `instances`
 * (the Auto Scaling group's, read only when boa is silent): how many it runs and which are protected.
 */
export function decide({ heartbeats, budget, gpusPerNode, scaling, instances, replacedGpus = 0 }) {
  if (heartbeats > 0) return { action: 'none', silent: false, reason: 'boa heartbeat seen' };
  if (budget === undefined) return { action: 'none', silent: true, reason: 'boa silent and no budget known' };
  const allowed = allowedNodes(budget, gpusPerNode, scaling.minSize ?? 0, replacedGpus);
  const desired = scaling.desiredSize ?? 0;
  const running = instances?.running ?? desired;
  if (desired <= allowed && running <= allowed)
    return { action: 'none', silent: true, reason: `desired ${desired} within ${allowed}` };
  return {
    action: 'shrink',
    silent: true,
    desiredSize: Math.min(desired, allowed),
    // Protected instances would outlive the lower desired size; boa's reason to protect them is gone.
    unprotect: instances?.protectedIds ?? [],
    reason:
      running > desired
        ? `${running} instances (${instances?.protectedIds.length ?? 0} protected from scale-in) above ${allowed}`
        : `desired ${desired} above ${allowed}`,
  };
}

/**
 * The shortest whole-minute period that keeps [from, to) within GetMetricStatistics' 1,440 datapoints.
 * CloudWatch rounds StartTime down to the minute and refuses more than 1,440, so a 24 h window at 60 s
 * (the budget's look-back, and the heartbeat's at guardMinutes 1440) is over the edge by that rounding:
 * one minute more is counted.
 */
export function periodFor(from, to) {
  const minutes = Math.ceil((to.getTime() - from.getTime()) / 60_000) + 1;
  return 60 * Math.ceil(minutes / 1440);
}

async function metricValues(cloudwatch, metricName, clusterName, from, to, statistic) {
  const { Datapoints = [] } = await cloudwatch.send(
    new GetMetricStatisticsCommand({
      Namespace: NAMESPACE,
      MetricName: metricName,
      Dimensions: [{ Name: 'Cluster', Value: clusterName }],
      StartTime: from,
      EndTime: to,
      Period: periodFor(from, to),
      Statistics: [statistic],
    }),
  );
  return Datapoints.filter((d) => d.Timestamp !== undefined).sort((a, b) => a.Timestamp - b.Timestamp);
}

/**
 * The group's instances that count against its size (not terminating), those protected from scale-in,
 * and the instance types of the former; `paidTypes`: the types of every instance EC2 may still bill,
 * terminating ones included (EKS's lifecycle hook holds one in Terminating:Wait, running, while it
 * drains the node: all of a replaced group's while CloudFormation deletes it).
 */
async function groupInstances(autoscaling, autoScalingGroupName) {
  const { AutoScalingGroups = [] } = await autoscaling.send(
    new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [autoScalingGroupName] }),
  );
  const listed = AutoScalingGroups[0]?.Instances ?? [];
  const live = listed.filter((i) => !String(i.LifecycleState ?? '').startsWith('Terminat'));
  return {
    running: live.length,
    types: live.map((i) => i.InstanceType),
    paidTypes: listed.filter((i) => i.LifecycleState !== 'Terminated').map((i) => i.InstanceType),
    // Only an instance in service can have its protection changed; the ASG refuses the others.
    protectedIds: live
      .filter((i) => i.ProtectedFromScaleIn && i.LifecycleState === 'InService')
      .map((i) => i.InstanceId),
  };
}

/**
 * Lifts scale-in protection, 50 instances a call (the API's limit); a batch the ASG refuses (an instance
 * that left service meanwhile) is sent again one instance at a time, and what is still refused is skipped.
 * Returns how many were lifted.
 */
async function unprotect(autoscaling, autoScalingGroupName, instanceIds) {
  const send = (ids) =>
    autoscaling.send(
      new SetInstanceProtectionCommand({
        AutoScalingGroupName: autoScalingGroupName,
        InstanceIds: ids,
        ProtectedFromScaleIn: false,
      }),
    );
  let lifted = 0;
  for (let i = 0; i < instanceIds.length; i += 50) {
    const batch = instanceIds.slice(i, i + 50);
    try {
      await send(batch);
      lifted += batch.length;
    } catch (error) {
      // Anything but an instance the ASG refuses (AccessDenied, throttling) fails the run, so the
      // Lambda's errors show, rather than a guard that looks as if it acted.
      if (!refusedInstance(error)) throw error;
      for (const id of batch) {
        try {
          await send([id]);
          lifted += 1;
        } catch (single) {
          if (!refusedInstance(single)) throw single;
          console.log(
            JSON.stringify({
              event: 'budget_guard.unprotect_skipped',
              instanceId: id,
              error: String(single),
            }),
          );
        }
      }
    }
  }
  return lifted;
}

/** The ASG's refusal of an instance not in service (Pending, Terminating) or no longer in the group. */
function refusedInstance(error) {
  return /not in InService|not part of Auto Scaling group|Instance Id not found/i.test(
    String(error?.message ?? ''),
  );
}

/**
 * Sets the desired size to `desiredSize`, waiting out another update of the group (IN_USE_RETRY). After a
 * wait the group is read again: the update that held it may have lowered the desired size (then nothing
 * is sent, the guard never raises it) or changed its minimum. Raised meanwhile, it is left alone: the
 * guard never raises it, so someone alive did, most likely boa back from its silence and resizing
 * before its heartbeat shows in CloudWatch (the update that held the group was its own). Cutting that
 * would kill nodes the group picks and have boa raise it again. Returns what it did.
 */
async function lowerDesiredSize(eks, settings, from, desiredSize, budget, sleep, replacedGpus = 0) {
  const { clusterName, nodegroupName, gpusPerNode } = settings;
  let current = from;
  let target = desiredSize;
  for (let attempt = 1; ; attempt++) {
    try {
      await eks.send(
        new UpdateNodegroupConfigCommand({
          clusterName,
          nodegroupName,
          scalingConfig: { desiredSize: target },
        }),
      );
      return { sent: target };
    } catch (error) {
      if (error?.name !== 'ResourceInUseException') throw error;
      if (attempt >= IN_USE_RETRY.maxAttempts) {
        throw new Error(
          `node group ${clusterName}/${nodegroupName} still busy with another update after ${attempt} attempts ` +
            `(ResourceInUseException); desired size left at ${current}, the budget allows ${target}`,
          { cause: error },
        );
      }
    }
    console.log(JSON.stringify({ event: 'budget_guard.in_use', attempt, delayMs: IN_USE_RETRY.delayMs }));
    await sleep(IN_USE_RETRY.delayMs);
    const { nodegroup } = await eks.send(new DescribeNodegroupCommand({ clusterName, nodegroupName }));
    const scaling = nodegroup?.scalingConfig ?? {};
    const before = current;
    current = scaling.desiredSize ?? 0;
    if (current > before) {
      console.log(JSON.stringify({ event: 'budget_guard.raised_meanwhile', from: before, to: current }));
      return { raisedMeanwhile: current };
    }
    target = Math.min(current, allowedNodes(budget, gpusPerNode, scaling.minSize ?? 0, replacedGpus));
    if (target >= current) return { withinBudget: current };
  }
}

/** One run of the guard; clients are injected (tests use aws-sdk-client-mock). */
export async function runGuard({ eks, cloudwatch, autoscaling }, settings, now = new Date(), options = {}) {
  const { clusterName, nodegroupName, guardMinutes } = settings;
  const { nodegroup } = await eks.send(new DescribeNodegroupCommand({ clusterName, nodegroupName }));
  const scaling = nodegroup?.scalingConfig ?? {};
  const autoScalingGroupName = nodegroup?.resources?.autoScalingGroups?.[0]?.name;

  const silentFrom = new Date(now.getTime() - guardMinutes * 60_000);
  const beats = await metricValues(cloudwatch, 'Heartbeat', clusterName, silentFrom, now, 'SampleCount');
  const heartbeats = beats.reduce((n, d) => n + (d.SampleCount ?? 0), 0);
  // The operator's latest budget as boa last published it; the deploy-time budget otherwise. The newest
  // bucket's Minimum: a 24-hour read has 2-minute buckets, and a cut within boa's last two minutes is
  // the budget to hold (its Maximum would be the value before the cut).
  const budgets = await metricValues(
    cloudwatch,
    'BudgetGpuHoursPerHour',
    clusterName,
    new Date(now.getTime() - 24 * 3_600_000),
    now,
    'Minimum',
  );
  const published = budgets.length > 0 ? budgets[budgets.length - 1].Minimum : undefined;
  const budget = published !== undefined && published > 0 ? published : settings.budget;

  // The Auto Scaling calls only help the desired size hold: one that fails (throttling after the SDK's
  // retries, AccessDenied, a timeout) does not stop the guard lowering it, the one change that bounds
  // what is paid. The run still fails after, for the Lambda's error alarm (before, the first such
  // failure threw before the desired size was touched, and every run did so while it lasted).
  let auxiliaryFailure;
  const failed = (event, error) => {
    auxiliaryFailure ??= error;
    console.log(JSON.stringify({ event, error: String(error) }));
  };
  // The group's instances are read only when the guard may act: boa alive costs it nothing more.
  let instances;
  let replaced;
  if (heartbeats === 0 && budget !== undefined && autoscaling && autoScalingGroupName) {
    try {
      instances = await groupInstances(autoscaling, autoScalingGroupName);
    } catch (error) {
      // Unread, the desired size alone is judged, as with no Auto Scaling client.
      failed('budget_guard.instances_unread', error);
    }
    try {
      replaced = await replacedInstances(
        eks,
        clusterName,
        nodegroup ?? { nodegroupName },
        (asg) => groupInstances(autoscaling, asg),
        // A type boa does not know: the guarded group's GPUs per node.
        (type) => settings.instanceGpus?.[type] ?? settings.gpusPerNode,
      );
    } catch (error) {
      // Unread, the guarded group alone is held to the budget, as before replaced groups were counted.
      failed('budget_guard.replaced_unread', error);
    }
  }
  const replacedRunning = replaced?.running ?? 0;
  const replacedGpus = replaced?.gpus ?? 0;
  const gpusPerNode = groupGpusPerNode(settings, nodegroup?.instanceTypes, instances?.types);
  const decision = decide({ heartbeats, budget, gpusPerNode, scaling, instances, replacedGpus });
  let unprotected = 0;
  let lowered = {};
  if (decision.action === 'shrink') {
    // Protection first: lowered with protected instances, the desired size drops and they keep running.
    // Still lowered when the protection could not be lifted: the unprotected instances above it go.
    if (decision.unprotect.length > 0) {
      try {
        unprotected = await unprotect(autoscaling, autoScalingGroupName, decision.unprotect);
      } catch (error) {
        failed('budget_guard.unprotect_failed', error);
      }
    }
    if (decision.desiredSize < (scaling.desiredSize ?? 0)) {
      const from = scaling.desiredSize ?? 0;
      lowered = await lowerDesiredSize(
        eks,
        { ...settings, gpusPerNode },
        from,
        decision.desiredSize,
        budget,
        options.sleep ?? delay,
        replacedGpus,
      );
    }
  }
  // A minimum raised above what the budget pays for (the stack sets 0; someone changed it since) is one
  // the guard keeps, as it never changes the bounds: the group stays paid above the budget, so the run
  // fails, for the error alarm, naming the fix (before, it reported itself holding the group, and was not).
  const budgetNodes = budget === undefined ? undefined : allowedNodes(budget, gpusPerNode, 0, replacedGpus);
  if (decision.silent && budgetNodes !== undefined && (scaling.minSize ?? 0) > budgetNodes) {
    failed(
      'budget_guard.minimum_above_budget',
      new Error(
        `node group ${clusterName}/${nodegroupName}: its minimum size ${scaling.minSize} is above the ` +
          `${budgetNodes} nodes the budget allows (${budget} GPU-hours per hour` +
          `${replacedGpus > 0 ? `, less ${replacedGpus} GPUs of a replaced group` : ''}), and the guard ` +
          'never lowers a minimum: set it back to 0, as the stack does (aws eks update-nodegroup-config ' +
          `--cluster-name ${clusterName} --nodegroup-name ${nodegroupName} --scaling-config minSize=0)`,
      ),
    );
  }
  // Nor with an empty group: nothing to hold, as on a first deploy before boa's first heartbeat (the
  // group is created at 0), where GuardTripped=1 would be a false alarm. Actions are unchanged: a silent
  // boa's group that gains a node is held (and reported) on the next run.
  const holding =
    decision.action === 'shrink' || (scaling.desiredSize ?? 0) > 0 || (instances?.running ?? 0) > 0;
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: NAMESPACE,
      MetricData: [
        {
          MetricName: 'GuardTripped',
          Dimensions: [{ Name: 'Cluster', Value: clusterName }],
          // Acting: silent with a budget to hold the group to. With none known it can do nothing, and
          // the silence alarm already says boa is silent.
          Value: decision.silent && budget !== undefined && holding ? 1 : 0,
          Unit: 'Count',
          Timestamp: now,
        },
      ],
    }),
  );
  const { unprotect: _, ...reported } = decision;
  const result = {
    ...reported,
    heartbeats,
    budget,
    unprotected,
    ...lowered,
    ...(replaced && replaced.groups.length > 0
      ? { replacedGroups: replaced.groups, replacedRunning, replacedGpus }
      : {}),
  };
  if (auxiliaryFailure !== undefined) {
    // What the run did do, before the error that fails it.
    console.log(JSON.stringify({ event: 'budget_guard', ...result, failed: String(auxiliaryFailure) }));
    throw auxiliaryFailure;
  }
  return result;
}

export async function handler() {
  const settings = readSettings(process.env);
  const clients = {
    eks: new EKSClient({}),
    cloudwatch: new CloudWatchClient({}),
    autoscaling: new AutoScalingClient({}),
  };
  const result = await runGuard(clients, settings);
  console.log(JSON.stringify({ event: 'budget_guard', ...result }));
  return result;
}
