/**
 * The GPU node group's taint (infra/gpu-nodegroup.ts). Its key is boa's own, not the resource name: EKS
 * runs the ExtendedResourceToleration admission plugin, which makes every pod requesting nvidia.com/gpu
 * tolerate a taint keyed nvidia.com/gpu, so with that key anyone's GPU pod (a notebook, a debug pod) was
 * scheduled onto boa's nodes, unseen by boa's placement (found in review).
 */
export const GPU_TAINT = { key: 'boa.dev/gpu', value: 'true', effect: 'NoSchedule' } as const;

/**
 * The key before 2026-12-01. Nodes launched before an upgrade may still carry it (EKS does not say that
 * a taint change reaches running nodes), so boa's pods and the device plugin tolerate both until every
 * such node is replaced.
 */
export const LEGACY_GPU_TAINT_KEY = 'nvidia.com/gpu';

/** What boa's pods and the device plugin tolerate on GPU nodes: the taint, old key and new. */
export function gpuTolerations(): Array<{ key: string; operator: 'Exists'; effect: 'NoSchedule' }> {
  return [GPU_TAINT.key, LEGACY_GPU_TAINT_KEY].map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoSchedule',
  }));
}
