// Budget guard (Lambda, Node.js, AWS SDK v3 from the runtime), outside boa, run every few minutes: when
// boa's Heartbeat metric has been silent for guardMinutes, lowers the node group's desired size to what
// the budget allows (floor(budget / GPUs per node), never below the group's minimum) and no further, and
// publishes GuardTripped so the guard alarm fires. It never raises the desired size. (The real GPU count
// is AWS's own GroupInServiceInstances, turned on by the CDK app: infra/asg-metrics.ts.)

import console from 'node:console';
import process from 'node:process';

const NAMESPACE = 'boa';

/** Whole nodes the budget pays for: floor(budget / GPUs per node), within the node group's bounds. */
export function allowedNodes(budget, gpusPerNode, minSize = 0) {
  return Math.max(minSize, Math.floor(budget / gpusPerNode + 1e-9));
}

/** What to do this run: nothing while boa is heard from or the group is within the budget. */
export function decide({ heartbeats, budget, gpusPerNode, scaling }) {
  if (heartbeats > 0) return { action: 'none', silent: false, reason: 'boa heartbeat seen' };
  if (budget === undefined) return { action: 'none', silent: true, reason: 'boa silent and no budget known' };
  const allowed = allowedNodes(budget, gpusPerNode, scaling.minSize ?? 0);
  const desired = scaling.desiredSize ?? 0;
  if (desired <= allowed)
    return { action: 'none', silent: true, reason: `desired ${desired} within ${allowed}` };
  return {
    action: 'shrink',
    silent: true,
    desiredSize: allowed,
    reason: `desired ${desired} above ${allowed}`,
  };
}

/** Reads the guard's settings from the environment (numbers arrive as strings). */
export function readSettings(env) {
  const settings = {
    clusterName: env.CLUSTER_NAME,
    nodegroupName: env.NODEGROUP_NAME,
    gpusPerNode: Number(env.GPUS_PER_NODE),
    guardMinutes: Number(env.GUARD_MINUTES ?? 15),
    budget: env.BUDGET ? Number(env.BUDGET) : undefined,
  };
  if (!settings.clusterName || !settings.nodegroupName)
    throw new Error('CLUSTER_NAME and NODEGROUP_NAME are required');
  if (!Number.isInteger(settings.gpusPerNode) || settings.gpusPerNode < 1)
    throw new Error(`GPUS_PER_NODE must be a positive integer, got ${env.GPUS_PER_NODE}`);
  if (!(settings.guardMinutes > 0))
    throw new Error(`GUARD_MINUTES must be positive, got ${env.GUARD_MINUTES}`);
  if (settings.budget !== undefined && !(settings.budget > 0))
    throw new Error(`BUDGET must be positive, got ${env.BUDGET}`);
  return settings;
}

async function metricValues(cloudwatch, metricName, clusterName, from, to, statistic) {
  const { Datapoints = [] } = await cloudwatch.getMetricStatistics({
    Namespace: NAMESPACE,
    MetricName: metricName,
    Dimensions: [{ Name: 'Cluster', Value: clusterName }],
    StartTime: from,
    EndTime: to,
    Period: 60,
    Statistics: [statistic],
  });
  return Datapoints.filter((d) => d.Timestamp !== undefined).sort((a, b) => a.Timestamp - b.Timestamp);
}

/** One run of the guard; clients are injected (tests use aws-sdk-client-mock). */
export async function runGuard({ eks, cloudwatch }, settings, now = new Date()) {
  const { clusterName, nodegroupName, gpusPerNode, guardMinutes } = settings;
  const { nodegroup } = await eks.describeNodegroup({ clusterName, nodegroupName });
  const scaling = nodegroup?.scalingConfig ?? {};

  const silentFrom = new Date(now.getTime() - guardMinutes * 60_000);
  const beats = await metricValues(cloudwatch, 'Heartbeat', clusterName, silentFrom, now, 'SampleCount');
  const heartbeats = beats.reduce((n, d) => n + (d.SampleCount ?? 0), 0);
  // The operator's latest budget as boa last published it; the deploy-time budget otherwise.
  const budgets = await metricValues(
    cloudwatch,
    'BudgetGpuHoursPerHour',
    clusterName,
    new Date(now.getTime() - 24 * 3_600_000),
    now,
    'Maximum',
  );
  const published = budgets.length > 0 ? budgets[budgets.length - 1].Maximum : undefined;
  const budget = published !== undefined && published > 0 ? published : settings.budget;

  const decision = decide({ heartbeats, budget, gpusPerNode, scaling });
  if (decision.action === 'shrink') {
    await eks.updateNodegroupConfig({
      clusterName,
      nodegroupName,
      scalingConfig: { desiredSize: decision.desiredSize },
    });
  }
  await cloudwatch.putMetricData({
    Namespace: NAMESPACE,
    MetricData: [
      {
        MetricName: 'GuardTripped',
        Dimensions: [{ Name: 'Cluster', Value: clusterName }],
        Value: decision.silent ? 1 : 0,
        Unit: 'Count',
        Timestamp: now,
      },
    ],
  });
  return { ...decision, heartbeats, budget };
}

export async function handler() {
  const settings = readSettings(process.env);
  const [{ EKS }, { CloudWatch }] = await Promise.all([
    import('@aws-sdk/client-eks'),
    import('@aws-sdk/client-cloudwatch'),
  ]);
  const result = await runGuard({ eks: new EKS({}), cloudwatch: new CloudWatch({}) }, settings);
  console.log(JSON.stringify({ event: 'budget_guard', ...result }));
  return result;
}
