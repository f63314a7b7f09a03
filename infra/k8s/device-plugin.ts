import { gpuTolerations } from '../../src/cloud/kubernetes/gpu-taint.ts';

/** Taint on every GPU node: only pods that tolerate it (boa's and the device plugin) are scheduled there. */
export { GPU_TAINT } from '../../src/cloud/kubernetes/gpu-taint.ts';

/** NVIDIA k8s-device-plugin release; the EKS AL2023 NVIDIA AMI ships the driver, not the plugin. */
export const NVIDIA_DEVICE_PLUGIN_IMAGE = 'nvcr.io/nvidia/k8s-device-plugin:v0.18.2';

/**
 * The device plugin DaemonSet (NVIDIA's static deployment, pinned) restricted to GPU nodes, so pods can
 * request `nvidia.com/gpu`. Applied by the cluster's kubectl handler: no Helm repository is fetched.
 */
export function nvidiaDevicePluginManifest(): Record<string, unknown> {
  const labels = { 'app.kubernetes.io/name': 'nvidia-device-plugin' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nvidia-device-plugin-daemonset', namespace: 'kube-system', labels },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { 'nvidia.com/gpu.present': 'true' },
          // Both keys: nodes launched before the key changed may still carry the old one.
          tolerations: gpuTolerations(),
          priorityClassName: 'system-node-critical',
          containers: [
            {
              name: 'nvidia-device-plugin-ctr',
              image: NVIDIA_DEVICE_PLUGIN_IMAGE,
              env: [{ name: 'FAIL_ON_INIT_ERROR', value: 'false' }],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'device-plugin', mountPath: '/var/lib/kubelet/device-plugins' }],
            },
          ],
          volumes: [
            {
              name: 'device-plugin',
              hostPath: { path: '/var/lib/kubelet/device-plugins', type: 'Directory' },
            },
          ],
        },
      },
    },
  };
}
