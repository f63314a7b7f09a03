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
    // Its token is mounted (the default): whether EKS Pod Identity's webhook still gives the pods their
    // credentials with automount off is not something this project can test without a cluster, and
    // users have found it needed on. No role binding names this account, so the token reads nothing.
  };
}
