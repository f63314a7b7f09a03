/**
 * Deploy hardening: the admin role trusts only named principals, the EKS endpoint only named CIDRs,
 * NetworkPolicies fence boa's and the jobs' namespaces (the jobs' denies ingress but what each job's own
 * policy allows) and the CNI enforces them, boa's volume is
 * retained and backed up daily for 7 days.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubernetesObjects, synthTemplate } from './synth.ts';

let template: Template;
beforeAll(() => {
  template = synthTemplate({
    adminPrincipalArns: 'arn:aws:iam::123456789012:role/ops,arn:aws:iam::123456789012:user/alice',
  });
}, 300_000);

describe('deploy hardening', () => {
  it('the cluster-admin role trusts exactly the named principals, never the account root', () => {
    const roles = template.findResources('AWS::IAM::Role', {
      Properties: { Description: Match.stringLikeRegexp('cluster-admin') },
    });
    const [role] = Object.values(roles) as Array<{ Properties: any }>;
    const principals = role!.Properties.AssumeRolePolicyDocument.Statement.map((s: any) => s.Principal.AWS);
    expect(principals.flat().sort()).toEqual([
      'arn:aws:iam::123456789012:role/ops',
      'arn:aws:iam::123456789012:user/alice',
    ]);
    expect(JSON.stringify(role)).not.toMatch(/:root/);
  });

  it("CloudWatch may use the cluster's KMS key and publish to the alarm topic for boa's alarms only", () => {
    const conditioned = (statement: any) => {
      expect(statement.Condition.StringEquals['aws:SourceAccount']).toBeDefined();
      expect(JSON.stringify(statement.Condition.ArnLike['aws:SourceArn'])).toContain(':alarm:boa-');
    };
    const keys = Object.values(template.findResources('AWS::KMS::Key')) as Array<{ Properties: any }>;
    const byCloudWatch = keys
      .flatMap((k) => k.Properties.KeyPolicy.Statement)
      .filter((st: any) => JSON.stringify(st.Principal ?? {}).includes('cloudwatch.amazonaws.com'));
    expect(byCloudWatch.length).toBeGreaterThan(0);
    for (const statement of byCloudWatch) conditioned(statement);
    const topicPolicies = Object.values(template.findResources('AWS::SNS::TopicPolicy')) as Array<{
      Properties: any;
    }>;
    const publish = topicPolicies
      .flatMap((p) => p.Properties.PolicyDocument.Statement)
      .filter((st: any) => JSON.stringify(st.Principal ?? {}).includes('cloudwatch.amazonaws.com'));
    expect(publish.length).toBeGreaterThan(0);
    for (const statement of publish) conditioned(statement);
  });

  it('the EKS endpoint is open only to allowedApiCidrs', () => {
    template.hasResourceProperties('AWS::EKS::Cluster', {
      ResourcesVpcConfig: Match.objectLike({ PublicAccessCidrs: ['203.0.113.0/24'] }),
    });
  });

  it("NetworkPolicies fence boa's and the jobs' namespaces, and the VPC CNI enforces them", () => {
    const objects = kubernetesObjects(template);
    const deny = objects.get('NetworkPolicy/default-deny-ingress');
    expect(deny.metadata.namespace).toBe('boa');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
    const api = objects.get('NetworkPolicy/boa-api');
    expect(api.spec.ingress[0].from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'boa-jobs' } } },
    ]);
    expect(api.spec.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 8080 }]);
    const jobs = objects.get('NetworkPolicy/jobs');
    expect(jobs.metadata.namespace).toBe('boa-jobs');
    expect(jobs.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    // No ingress rule: a job's pods are reached only as its own NetworkPolicy (boa's) allows.
    expect(jobs.spec.ingress).toBeUndefined();
    expect(JSON.stringify(jobs.spec.egress)).toContain('"except":["169.254.169.254/32"]');
    // Pods an older boa made (without the label every pod boa makes now carries) keep the namespace's
    // ingress, so a deploy does not cut a running job's peers off before boa made its policy.
    const older = objects.get('NetworkPolicy/jobs-before-isolation');
    expect(older.spec.podSelector).toEqual({
      matchExpressions: [{ key: 'boa.dev/network', operator: 'DoesNotExist' }],
    });
    expect(older.spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'boa-jobs' } } }] },
    ]);
    template.hasResourceProperties('AWS::EKS::Addon', {
      AddonName: 'vpc-cni',
      ConfigurationValues: JSON.stringify({ enableNetworkPolicy: 'true' }),
    });
  });

  it("boa's volume is retained and backed up daily, kept 7 days, in a retained encrypted vault", () => {
    const storageClass = kubernetesObjects(template).get('StorageClass/boa-gp3');
    expect(storageClass.reclaimPolicy).toBe('Retain');
    expect(storageClass.parameters.tagSpecification_1).toBe('boa-backup=daily');
    template.hasResourceProperties('AWS::Backup::BackupPlan', {
      BackupPlan: Match.objectLike({
        BackupPlanRule: [
          Match.objectLike({
            ScheduleExpression: 'cron(0 3 * * ? *)',
            Lifecycle: { DeleteAfterDays: 7 },
          }),
        ],
      }),
    });
    template.hasResourceProperties('AWS::Backup::BackupSelection', {
      BackupSelection: Match.objectLike({
        ListOfTags: [{ ConditionKey: 'boa-backup', ConditionValue: 'daily', ConditionType: 'STRINGEQUALS' }],
      }),
    });
    template.hasResource('AWS::Backup::BackupVault', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EncryptionKeyArn: Match.anyValue() }),
    });
  });
});
