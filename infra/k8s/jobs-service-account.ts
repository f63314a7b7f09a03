/** The service account the jobs' pods run as when the stack gives them an IAM role (context jobsRoleArn). */
export const JOBS_SERVICE_ACCOUNT = 'boa-job';

export function jobsServiceAccountManifest(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: JOBS_SERVICE_ACCOUNT,
      namespace,
      labels: { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'job' },
    },
    // The jobs need AWS credentials, not the Kubernetes API: EKS Pod Identity's webhook mounts a token
    // of its own, so the pods get none for the API server (as without a service account).
    automountServiceAccountToken: false,
  };
}
