// CloudFormation custom resource (Lambda, Node.js, AWS SDK v3 from the runtime): sets the GPU node group's
// minimum and maximum size and never lowers its desired size, which belongs to boa. The node group resource
// keeps a constant scaling config from its creation, so CloudFormation itself has nothing to reapply later.

import console from 'node:console';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * What to do about the bounds: nothing (already right), send `scalingConfig` to eks:UpdateNodegroupConfig,
 * or wait. A desired size is never lowered here: a lower desired size lets the Auto Scaling group pick the
 * instances to terminate by its own policy, busy GPU nodes included, where boa must choose them (idle
 * first, drained). So a new max below the desired size waits for boa, now running with the lower
 * BOA_MAX_NODES, to bring the desired size down itself. Raising it to a raised min stays: that only
 * launches nodes.
 */
export function planScalingUpdate(current, wanted) {
  if (current.minSize === wanted.minSize && current.maxSize === wanted.maxSize) return { action: 'none' };
  const desired = current.desiredSize ?? 0;
  if (desired > wanted.maxSize) return { action: 'wait', desiredSize: desired };
  const scalingConfig = { minSize: wanted.minSize, maxSize: wanted.maxSize };
  // EKS rejects bounds that exclude the current desired size.
  if (desired < wanted.minSize) scalingConfig.desiredSize = wanted.minSize;
  return { action: 'update', scalingConfig };
}

/** The deploy's error when boa has not brought the desired size down to the new max in time. */
export function desiredAboveMaxMessage(target, desiredSize, waitedMs) {
  const { clusterName, nodegroupName, maxSize } = target;
  return (
    `GPU node group ${clusterName}/${nodegroupName}: desired size ${desiredSize} is above the wanted ` +
    `maxSize ${maxSize} (maxGpuNodes) and did not come down in ${Math.round(waitedMs / 1000)} s. ` +
    `The bounds were left unchanged (and the stack rolls back, boa's BOA_MAX_NODES too): lowering them ` +
    `would let the Auto Scaling group, not boa, pick which (possibly busy) nodes to terminate. Deploy with ` +
    `-c maxGpuNodes=${desiredSize} (or higher) to keep the current size, or first let boa scale in to ` +
    `${maxSize} nodes or fewer (lower the budget, or wait until its jobs need fewer nodes) and deploy again.`
  );
}

/**
 * Reads the node group and updates its bounds if needed. While another update is in flight (boa resizing,
 * or the group still creating) EKS answers ResourceInUseException, and while the desired size is above the
 * new max boa has nodes to remove: in both cases wait and read again. Both waits share `maxAttempts`
 * reads (and stop early when `timeLeftMs` says the Lambda is about to time out), so the whole call stays
 * inside the Lambda's timeout and fails with a clear error instead.
 */
export async function applyBounds(eks, target, options) {
  const { clusterName, nodegroupName, minSize, maxSize } = target;
  // Keep a minute for the last calls and the answer to CloudFormation.
  const canWait = (attempt) =>
    attempt < options.maxAttempts && (options.timeLeftMs?.() ?? Infinity) > options.retryMs + 60_000;
  let waitedMs = 0;
  for (let attempt = 1; ; attempt++) {
    const { nodegroup } = await eks.describeNodegroup({ clusterName, nodegroupName });
    const plan = planScalingUpdate(nodegroup?.scalingConfig ?? {}, { minSize, maxSize });
    if (plan.action === 'none') return { updated: false };
    if (plan.action === 'wait') {
      if (!canWait(attempt)) throw new Error(desiredAboveMaxMessage(target, plan.desiredSize, waitedMs));
      console.log(JSON.stringify({ waitingForBoa: { desiredSize: plan.desiredSize, maxSize, attempt } }));
    } else {
      try {
        const { scalingConfig } = plan;
        const { update } = await eks.updateNodegroupConfig({ clusterName, nodegroupName, scalingConfig });
        return { updated: true, updateId: update?.id, scalingConfig };
      } catch (error) {
        if (error?.name !== 'ResourceInUseException' || !canWait(attempt)) throw error;
      }
    }
    await options.sleep(options.retryMs);
    waitedMs += options.retryMs;
  }
}

/** Reads and checks the custom resource's properties (CloudFormation hands every value over as a string). */
export function readTarget(properties) {
  const minSize = Number(properties.MinSize);
  const maxSize = Number(properties.MaxSize);
  const { ClusterName: clusterName, NodegroupName: nodegroupName } = properties;
  if (!clusterName || !nodegroupName) throw new Error('ClusterName and NodegroupName are required');
  if (
    !Number.isInteger(minSize) ||
    !Number.isInteger(maxSize) ||
    minSize < 0 ||
    maxSize < Math.max(1, minSize)
  ) {
    throw new Error(`bad bounds: MinSize=${properties.MinSize} MaxSize=${properties.MaxSize}`);
  }
  return { clusterName, nodegroupName, minSize, maxSize };
}

export async function handler(event, context) {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const target = readTarget(event.ResourceProperties);
  const { EKS } = await import('@aws-sdk/client-eks');
  // At most 44 reads 15 s apart (under 11 min): inside the Lambda's 14 min timeout (infra/gpu-nodegroup.ts)
  // and the provider framework's 15, with time left for the calls themselves.
  const result = await applyBounds(new EKS({}), target, {
    maxAttempts: 44,
    retryMs: 15_000,
    sleep: (ms) => delay(ms),
    ...(context?.getRemainingTimeInMillis ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {}),
  });
  console.log(JSON.stringify({ target, ...result }));
  return {
    PhysicalResourceId: `${target.clusterName}/${target.nodegroupName}`,
    Data: { Updated: String(result.updated) },
  };
}
