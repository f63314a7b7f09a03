import type { V1Pod } from '@kubernetes/client-node';

/**
 * What to do about a container the kernel killed for memory (terminated reason OOMKilled), which the
 * kubelet reports with no message: the job restarted and failed with "OOMKilled" alone. A replica's
 * memory limit is workload.memoryPerGpu times its GPUs (pods.ts), so a job boa runs narrower gets
 * less memory, while a data loader's needs may not shrink with it: the limit and the width are named.
 * Without a limit the node itself ran out (nothing set aside for the replica).
 */
export function oomAdvice(pod: V1Pod): string {
  const resources = pod.spec?.containers?.[0]?.resources;
  const limit = resources?.limits?.memory;
  const gpus = resources?.limits?.['nvidia.com/gpu'] ?? resources?.requests?.['nvidia.com/gpu'];
  const width = gpus === undefined ? '' : ` at ${gpus} GPU${gpus === '1' ? '' : 's'}`;
  if (limit)
    return `the container used more than its memory limit, ${limit}${width} (workload.memoryPerGpu times the replica's GPUs): raise workload.memoryPerGpu or lower the job's memory use`;
  return `the node ran out of memory and its kernel killed the container, which had no memory set aside: set workload.memoryPerGpu to what a replica needs per GPU`;
}
