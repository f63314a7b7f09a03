// CloudFormation custom resource (Lambda, Node.js, AWS SDK v3 from the runtime): sets the GPU node group's
// minimum and maximum size and never its desired size, which belongs to boa. The node group resource keeps
// a constant scaling config from its creation, so CloudFormation itself has nothing to reapply later.

import console from 'node:console';
import { setTimeout as delay } from 'node:timers/promises';

/** What to send to eks:UpdateNodegroupConfig, or undefined when the bounds are already right. */
export function planScalingUpdate(current, wanted) {
  if (current.minSize === wanted.minSize && current.maxSize === wanted.maxSize) return undefined;
  const scalingConfig = { minSize: wanted.minSize, maxSize: wanted.maxSize };
  // EKS rejects bounds that exclude the current desired size; clamp it only in that case.
  const desired = current.desiredSize ?? 0;
  if (desired > wanted.maxSize) scalingConfig.desiredSize = wanted.maxSize;
  else if (desired < wanted.minSize) scalingConfig.desiredSize = wanted.minSize;
  return scalingConfig;
}

/**
 * Reads the node group and updates its bounds if needed. While another update is in flight (boa resizing,
 * or the group still creating) EKS answers ResourceInUseException: wait and try again.
 */
export async function applyBounds(eks, target, options) {
  const { clusterName, nodegroupName, minSize, maxSize } = target;
  for (let attempt = 1; ; attempt++) {
    const { nodegroup } = await eks.describeNodegroup({ clusterName, nodegroupName });
    const scalingConfig = planScalingUpdate(nodegroup?.scalingConfig ?? {}, { minSize, maxSize });
    if (scalingConfig === undefined) return { updated: false };
    try {
      const { update } = await eks.updateNodegroupConfig({ clusterName, nodegroupName, scalingConfig });
      return { updated: true, updateId: update?.id, scalingConfig };
    } catch (error) {
      if (error?.name !== 'ResourceInUseException' || attempt >= options.maxAttempts) throw error;
      await options.sleep(options.retryMs);
    }
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

export async function handler(event) {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const target = readTarget(event.ResourceProperties);
  const { EKS } = await import('@aws-sdk/client-eks');
  const result = await applyBounds(new EKS({}), target, {
    maxAttempts: 40,
    retryMs: 15_000,
    sleep: (ms) => delay(ms),
  });
  console.log(JSON.stringify({ target, ...result }));
  return {
    PhysicalResourceId: `${target.clusterName}/${target.nodegroupName}`,
    Data: { Updated: String(result.updated) },
  };
}
