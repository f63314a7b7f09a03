/**
 * Context jobsRoleArn: the jobs' pods get an existing IAM role (e.g. S3 for `--checkpoint s3://...`)
 * through EKS Pod Identity, on a service account in the jobs' namespace that boa names in their pods
 * (BOA_JOBS_SERVICE_ACCOUNT); jobsImagePullSecrets reaches boa as BOA_IMAGE_PULL_SECRETS. Found in a
 * deploy review: docs/kubernetes.md relied on such a service account and no setting made one.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ContextError } from '../../infra/context.ts';
import { buildStack, kubernetesObjects, manifestObjects, type Resource, synthTemplate } from './synth.ts';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/ml/boa-checkpoints';

let plain: Template;
let withRole: Template;
beforeAll(() => {
  plain = synthTemplate();
  withRole = synthTemplate({
    jobsRoleArn: ROLE_ARN,
    jobsImagePullSecrets: 'regcred,mirror',
    jobsNamespace: 'training',
  });
}, 240_000);

const associations = (t: Template) =>
  Object.entries(t.findResources('AWS::EKS::PodIdentityAssociation')) as [string, Resource][];

function boaEnv(t: Template): Record<string, string> {
  const container = kubernetesObjects(t).get('Deployment/boa').spec.template.spec.containers[0];
  return Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
}

/** The logical id of the custom resource that applies the Kubernetes object kind/name. */
function manifestId(t: Template, key: string): string {
  const found = Object.entries(t.findResources('Custom::AWSCDK-EKS-KubernetesResource')).filter(([, r]) =>
    manifestObjects(r as Resource).some((o) => `${o.kind}/${o.metadata.name}` === key),
  );
  expect(found, key).toHaveLength(1);
  return found[0]![0];
}

describe('jobsRoleArn', () => {
  it("makes a service account in the jobs' namespace, its token mounted as Pod Identity may need", () => {
    const account = kubernetesObjects(withRole).get('ServiceAccount/boa-job');
    expect(account.metadata).toMatchObject({ name: 'boa-job', namespace: 'training' });
    expect(account.automountServiceAccountToken).toBeUndefined();
    // No IRSA annotation: the cluster has no OIDC provider to honour it.
    expect(account.metadata.annotations ?? {}).not.toHaveProperty(['eks.amazonaws.com/role-arn']);
    // Applied once the namespace exists.
    const id = manifestId(withRole, 'ServiceAccount/boa-job');
    const resource = withRole.toJSON().Resources[id] as Resource;
    expect(resource.DependsOn).toContain(manifestId(withRole, 'Namespace/training'));
  });

  it('associates the given role with it through EKS Pod Identity, session tags on', () => {
    const [clusterId] = Object.keys(withRole.findResources('AWS::EKS::Cluster'));
    const jobs = associations(withRole).filter(([, a]) => a.Properties.Namespace === 'training');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]![1].Properties).toMatchObject({
      ClusterName: { Ref: clusterId },
      Namespace: 'training',
      ServiceAccount: 'boa-job',
      RoleArn: ROLE_ARN,
    });
    expect(jobs[0]![1].Properties.DisableSessionTags ?? false).toBe(false);
  });

  it("tells boa to run the jobs' pods as it, and starts boa only after the account and association", () => {
    expect(boaEnv(withRole)).toMatchObject({
      BOA_JOBS_NAMESPACE: 'training',
      BOA_JOBS_SERVICE_ACCOUNT: 'boa-job',
      BOA_IMAGE_PULL_SECRETS: 'regcred,mirror',
    });
    const app = withRole.toJSON().Resources[manifestId(withRole, 'Deployment/boa')] as Resource;
    const [associationId] = associations(withRole).find(([, a]) => a.Properties.Namespace === 'training')!;
    expect(app.DependsOn).toEqual(
      expect.arrayContaining([manifestId(withRole, 'ServiceAccount/boa-job'), associationId]),
    );
  });

  it("without it: no jobs' service account, association or variables", () => {
    expect([...kubernetesObjects(plain).keys()].filter((key) => key.startsWith('ServiceAccount/'))).toEqual([
      'ServiceAccount/boa',
    ]);
    expect(associations(plain).map(([, a]) => a.Properties.Namespace)).toEqual(['boa']);
    expect(boaEnv(plain)).not.toHaveProperty('BOA_JOBS_SERVICE_ACCOUNT');
    expect(boaEnv(plain)).not.toHaveProperty('BOA_IMAGE_PULL_SECRETS');
  });

  it.each([
    'arn:aws:iam::123456789012:user/alice',
    'arn:aws:iam::123456789012:policy/s3',
    'arn:aws:iam::12345:role/short-account',
    'boa-checkpoints',
    'arn:aws:s3:::bucket',
  ])('refuses %s, naming the key and what it takes', (jobsRoleArn) => {
    expect(() => buildStack({ jobsRoleArn })).toThrow(ContextError);
    expect(() => buildStack({ jobsRoleArn })).toThrow(
      `context "jobsRoleArn" must be the ARN of an existing IAM role, arn:aws:iam::ACCOUNT:role/NAME`,
    );
  });

  it('refuses an image pull secret name Kubernetes would not take', () => {
    expect(() => buildStack({ jobsImagePullSecrets: 'regcred,Not_A_Name' })).toThrow(
      `context "jobsImagePullSecrets" must list names of Secrets in the jobs' namespace`,
    );
  });
});
