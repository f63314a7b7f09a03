import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AssetManifest } from 'aws-cdk-lib/cloud-assembly-schema';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../infra/boa-workload.ts';
import { GPU_NODEGROUP_CREATE_SCALING } from '../../infra/gpu-nodegroup.ts';
import { METRIC_NAMES } from '../../infra/monitoring.ts';
import { nodegroupFilters } from '../../src/cloud/aws/ec2-nodes.ts';
import { DEFAULT_LABELS } from '../../src/cloud/aws/eks-pool-config.ts';
import { DEPLOYMENT_TAGS } from '../../src/cloud/aws/leftover-nodegroups.ts';
import { buildStack, kubernetesObjects, manifestObjects, type Resource, synthTemplate } from './synth.ts';

// Two synths shared by the whole file: the defaults, and a variant with other context values.
let template: Template;
let variant: Template;
let assetManifest: AssetManifest;
beforeAll(() => {
  const { app, stack } = buildStack();
  template = Template.fromStack(stack);
  const artifact = app.synth().getStackByName(stack.stackName);
  const assets = artifact.dependencies.find((d) => d instanceof cxapi.AssetManifestArtifact);
  assetManifest = JSON.parse(readFileSync((assets as cxapi.AssetManifestArtifact).file, 'utf8'));
  variant = synthTemplate({
    maxGpuNodes: '8',
    budget: '40',
    nodePricePerHour: '4.2',
    allowedApiCidrs: '203.0.113.0/24,198.51.100.7/32',
    exposeApi: 'true',
  });
}, 120_000);

function only(t: Template, type: string, props: Record<string, unknown> = {}): [string, Resource] {
  const found = Object.entries(t.findResources(type, props ? { Properties: props } : undefined));
  expect(found, `${type} matching ${JSON.stringify(props)}`).toHaveLength(1);
  return found[0] as [string, Resource];
}

/**
 * A Pod Identity role's trust: pods.eks.amazonaws.com, only with the session tags of one service account
 * in this cluster.
 */
function podIdentityTrust(t: Template, namespace: string, serviceAccount: string): unknown[] {
  const [clusterId] = Object.keys(t.findResources('AWS::EKS::Cluster'));
  return [
    {
      Effect: 'Allow',
      Principal: { Service: 'pods.eks.amazonaws.com' },
      Action: ['sts:AssumeRole', 'sts:TagSession'],
      Condition: {
        StringEquals: {
          'aws:RequestTag/eks-cluster-arn': { 'Fn::GetAtt': [clusterId, 'Arn'] },
          'aws:RequestTag/kubernetes-namespace': namespace,
          'aws:RequestTag/kubernetes-service-account': serviceAccount,
        },
      },
    },
  ];
}

const gpuNodegroup = (t: Template) => only(t, 'AWS::EKS::Nodegroup', { AmiType: 'AL2023_x86_64_NVIDIA' });

/** The launch template data of a node group, which must carry the disk (no DiskSize beside a template). */
function nodeLaunchTemplate(t: Template, ng: Resource): unknown {
  expect(ng.Properties.DiskSize).toBeUndefined();
  const id = ng.Properties.LaunchTemplate?.Id?.Ref;
  expect(ng.Properties.LaunchTemplate).toEqual({
    Id: { Ref: id },
    Version: { 'Fn::GetAtt': [id, 'LatestVersionNumber'] },
  });
  return (t.toJSON().Resources[id] as Resource).Properties.LaunchTemplateData;
}

const imdsHopOne = (diskGiB: number) => ({
  MetadataOptions: { HttpEndpoint: 'enabled', HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
  BlockDeviceMappings: [
    {
      DeviceName: '/dev/xvda',
      Ebs: { VolumeSize: diskGiB, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: true },
    },
  ],
});

describe('network', () => {
  it('spans two availability zones with private subnets for the nodes', () => {
    template.resourceCountIs('AWS::EC2::VPC', 1);
    const subnets = Object.values(template.findResources('AWS::EC2::Subnet')) as Resource[];
    const isPrivate = (s: Resource) => s.Properties.MapPublicIpOnLaunch === false;
    expect(subnets.filter(isPrivate)).toHaveLength(2);
    expect(subnets.filter((s) => !isPrivate(s))).toHaveLength(2);
    const zones = new Set(
      subnets.filter(isPrivate).map((s) => JSON.stringify(s.Properties.AvailabilityZone)),
    );
    expect(zones.size).toBe(2);
    template.resourceCountIs('AWS::EC2::FlowLog', 1);
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway' });
  });

  it('puts every node group in the private subnets', () => {
    const privateIds = Object.entries(template.findResources('AWS::EC2::Subnet'))
      .filter(([, s]) => (s as Resource).Properties.MapPublicIpOnLaunch === false)
      .map(([id]) => id)
      .sort();
    for (const ng of Object.values(template.findResources('AWS::EKS::Nodegroup')) as Resource[]) {
      expect(ng.Properties.Subnets.map((s: { Ref: string }) => s.Ref).sort()).toEqual(privateIds);
    }
  });
});

describe('cluster', () => {
  it('is a native EKS cluster with managed node groups only, control-plane logging on and encrypted secrets', () => {
    template.hasResourceProperties('AWS::EKS::Cluster', {
      Name: 'boa',
      Version: '1.36',
      ComputeConfig: { Enabled: false },
      Logging: {
        ClusterLogging: {
          EnabledTypes: [
            { Type: 'api' },
            { Type: 'audit' },
            { Type: 'authenticator' },
            { Type: 'controllerManager' },
            { Type: 'scheduler' },
          ],
        },
      },
      EncryptionConfig: [{ Provider: { KeyArn: Match.anyValue() }, Resources: ['secrets'] }],
      ResourcesVpcConfig: Match.objectLike({ EndpointPrivateAccess: true, EndpointPublicAccess: true }),
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: '/aws/eks/boa/cluster',
      RetentionInDays: 30,
    });
    // No second autoscaler: nothing but boa scales the GPU group, and no Auto Mode node pools exist.
    expect(JSON.stringify(template.toJSON())).not.toMatch(/cluster-autoscaler|karpenter/i);
  });

  it('restricts the public API endpoint to allowedApiCidrs, which are required (never 0.0.0.0/0)', () => {
    const [, cluster] = only(template, 'AWS::EKS::Cluster');
    expect(cluster.Properties.ResourcesVpcConfig.PublicAccessCidrs).toEqual(['203.0.113.0/24']);
    expect(() => synthTemplate({ allowedApiCidrs: '' })).toThrow(/"allowedApiCidrs" is required/);
    variant.hasResourceProperties('AWS::EKS::Cluster', {
      ResourcesVpcConfig: Match.objectLike({ PublicAccessCidrs: ['203.0.113.0/24', '198.51.100.7/32'] }),
    });
  });

  it('has a small fixed-size on-demand system node group for boa', () => {
    template.hasResourceProperties('AWS::EKS::Nodegroup', {
      AmiType: 'AL2023_x86_64_STANDARD',
      CapacityType: 'ON_DEMAND',
      InstanceTypes: ['t3.medium'],
      ScalingConfig: { MinSize: 2, DesiredSize: 2, MaxSize: 2 },
      Labels: { 'boa/node-role': 'system' },
    });
  });

  // boa's pod, CoreDNS and the EBS CSI controller get AWS credentials through Pod Identity, not the
  // node's role: with the default hop limit of 2, any pod here could still fetch that role from IMDS.
  it('answers instance metadata only with IMDSv2 and one hop, as the GPU nodes do', () => {
    const [, ng] = only(template, 'AWS::EKS::Nodegroup', { AmiType: 'AL2023_x86_64_STANDARD' });
    expect(nodeLaunchTemplate(template, ng)).toEqual(imdsHopOne(30));
    template.resourceCountIs('AWS::EC2::LaunchTemplate', 2);
  });

  it('installs the EBS CSI driver and the Pod Identity agent as add-ons', () => {
    template.hasResourceProperties('AWS::EKS::Addon', { AddonName: 'eks-pod-identity-agent' });
    template.hasResourceProperties('AWS::EKS::Addon', {
      AddonName: 'aws-ebs-csi-driver',
      PodIdentityAssociations: [{ ServiceAccount: 'ebs-csi-controller-sa', RoleArn: Match.anyValue() }],
    });
  });

  it("lets only the EBS CSI controller's service account in this cluster assume the driver's role", () => {
    // Found in review: trusted with no condition, any Pod Identity association in the account could give
    // its pods this role, with its power to create, attach and delete EBS volumes.
    const [, addon] = only(template, 'AWS::EKS::Addon', { AddonName: 'aws-ebs-csi-driver' });
    const roleId = addon.Properties.PodIdentityAssociations[0].RoleArn['Fn::GetAtt'][0];
    const role = template.toJSON().Resources[roleId] as Resource;
    // The add-on's association is in its own namespace, kube-system.
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual(
      podIdentityTrust(template, 'kube-system', 'ebs-csi-controller-sa'),
    );
  });

  it('installs the node monitoring agent, without which auto-repair never hears of a failed GPU', () => {
    const [, ng] = gpuNodegroup(template);
    expect(ng.Properties.NodeRepairConfig).toEqual({ Enabled: true });
    const [, agent] = only(template, 'AWS::EKS::Addon', { AddonName: 'eks-node-monitoring-agent' });
    // Its DaemonSet lands on nodes, so it waits for the system nodes.
    expect(agent.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/NodegroupSystem/)]));
  });
});

describe('GPU node group', () => {
  it('is g4dn.12xlarge on demand with the NVIDIA AMI, min 0, GPU taint and labels', () => {
    const [, ng] = gpuNodegroup(template);
    expect(ng.Properties).toMatchObject({
      InstanceTypes: ['g4dn.12xlarge'],
      CapacityType: 'ON_DEMAND',
      ScalingConfig: { MinSize: 0 },
      // boa's own key: ExtendedResourceToleration makes any pod requesting nvidia.com/gpu tolerate a
      // taint keyed nvidia.com/gpu, so with that key others' GPU pods landed on boa's nodes.
      Taints: [{ Key: 'boa.dev/gpu', Value: 'true', Effect: 'NO_SCHEDULE' }],
      Labels: { 'boa/node-role': 'gpu', 'nvidia.com/gpu.present': 'true' },
      // EKS node auto-repair replaces nodes that turn unhealthy (kubelet, GPU) on its own.
      NodeRepairConfig: { Enabled: true },
    });
    // Its disk, and no instance metadata for pods (IMDSv2, one hop): jobs never borrow the node's role.
    expect(nodeLaunchTemplate(template, ng)).toEqual(imdsHopOne(200));
  });

  // deploy.md's settings table warns that a gpuNodeDiskGiB change rolls every GPU node: the disk is in
  // the launch template, the group follows its latest version, and EKS forces the update through.
  it('rolls every GPU node on a gpuNodeDiskGiB change, as deploy.md says', () => {
    const [, ng] = gpuNodegroup(template);
    const bigger = synthTemplate({ gpuNodeDiskGiB: '300' });
    const [, biggerNg] = gpuNodegroup(bigger);
    expect(nodeLaunchTemplate(bigger, biggerNg)).toEqual(imdsHopOne(300));
    expect(biggerNg.Properties.ForceUpdateEnabled).toBe(true);
    expect({ ...biggerNg.Properties, LaunchTemplate: undefined }).toEqual({
      ...ng.Properties,
      LaunchTemplate: undefined,
    });
    const deployMd = readFileSync(path.join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
    const row = deployMd.split('\n').find((line) => line.startsWith('| `gpuNodeDiskGiB` |'));
    expect(row).toMatch(/rolls \*\*every\*\* GPU node.*surged in and paid.*every running job/);
  });

  // deploy.md's "Changing the instance type" says why the old group's nodes go unseen while CloudFormation
  // replaces the group: boa lists nodes by their group's name. Should that change, so must the section.
  it("lists nodes by the group's name tag, a replaced group's beside it, as deploy.md's instance-type section says", () => {
    expect(nodegroupFilters({ clusterName: 'boa', nodegroupName: 'gpu-1' })).toContainEqual({
      Name: 'tag:eks:nodegroup-name',
      Values: ['gpu-1'],
    });
    // The old group's nodes, paid until CloudFormation deletes it, are listed by the same call.
    expect(nodegroupFilters({ clusterName: 'boa', nodegroupName: 'gpu-1' }, ['gpu-0'])).toContainEqual({
      Name: 'tag:eks:nodegroup-name',
      Values: ['gpu-1', 'gpu-0'],
    });
    const deployMd = readFileSync(path.join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
    const section = deployMd.split('### Changing the instance type')[1]?.split('\n## ')[0] ?? '';
    expect(section).toMatch(/so it counts them: in its ledger/);
    expect(section).toMatch(/may change the type in the same deploy that brings this version/);
    expect(section).toMatch(/quiet hour/);
  });

  // With nothing stored, boa takes a group for its replaced one by these (src/cloud/aws/leftover-nodegroups.ts):
  // they must be on the GPU group, and the system group must not carry boa's GPU labels.
  it('tags the GPU node group with the deployment tags and labels boa finds a replaced group by', () => {
    const [, gpu] = gpuNodegroup(template);
    for (const key of DEPLOYMENT_TAGS) expect(gpu.Properties.Tags).toHaveProperty([key]);
    expect(gpu.Properties.Tags).toMatchObject({ app: 'boa', 'boa:cluster': 'boa' });
    expect(gpu.Properties.Labels).toMatchObject(DEFAULT_LABELS);
    const [, system] = only(template, 'AWS::EKS::Nodegroup', { AmiType: 'AL2023_x86_64_STANDARD' });
    expect(system.Properties.Labels).not.toMatchObject(DEFAULT_LABELS);
  });

  it('gets min 0 and max from context through the bounds resource, which never sets a desired size', () => {
    const bounds = (t: Template) => only(t, 'Custom::BoaGpuNodegroupBounds')[1].Properties;
    const [gpuId] = gpuNodegroup(template);
    expect(bounds(template)).toMatchObject({
      MinSize: 0,
      MaxSize: 4,
      NodegroupName: { 'Fn::GetAtt': [gpuId, 'NodegroupName'] },
    });
    expect(bounds(variant)).toMatchObject({ MinSize: 0, MaxSize: 8 });
    for (const t of [template, variant]) expect(bounds(t)).not.toHaveProperty('DesiredSize');
  });

  it("applies the bounds after boa's Deployment, whose BOA_MAX_NODES brings the size down first", () => {
    const [, bounds] = only(template, 'Custom::BoaGpuNodegroupBounds');
    const app = Object.entries(template.findResources('Custom::AWSCDK-EKS-KubernetesResource')).find(
      ([, r]) =>
        manifestObjects(r as Resource).some((o) => o.kind === 'Deployment' && o.metadata.name === 'boa'),
    );
    expect(app).toBeDefined();
    expect(bounds.DependsOn).toContain(app![0]);
  });

  it('has a scaling config that no context changes, so a later deploy never resets the desired size', () => {
    const scaling = (t: Template) => gpuNodegroup(t)[1].Properties.ScalingConfig;
    expect(scaling(template)).toEqual({
      MinSize: GPU_NODEGROUP_CREATE_SCALING.minSize,
      DesiredSize: 0,
      MaxSize: GPU_NODEGROUP_CREATE_SCALING.maxSize,
    });
    // A different max, budget and access: the node group resource (hence its scaling config) is unchanged.
    expect(scaling(variant)).toEqual(scaling(template));
    expect(gpuNodegroup(variant)[1].Properties).toEqual(gpuNodegroup(template)[1].Properties);
  });

  it('runs the NVIDIA device plugin on GPU nodes only', () => {
    const plugin = kubernetesObjects(template).get('DaemonSet/nvidia-device-plugin-daemonset');
    expect(plugin.metadata.namespace).toBe('kube-system');
    expect(plugin.spec.template.spec.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    // The new key and the old one, which nodes launched before an upgrade may still carry.
    expect(plugin.spec.template.spec.tolerations).toEqual([
      { key: 'boa.dev/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(plugin.spec.template.spec.containers[0].image).toMatch(/^nvcr\.io\/nvidia\/k8s-device-plugin:v\d/);
  });
});

describe("boa's IAM role (EKS Pod Identity)", () => {
  const boaRole = (t: Template) =>
    only(t, 'AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'pods.eks.amazonaws.com' } })],
      }),
      Description: Match.absent(),
    });

  it('is associated with the boa service account in the boa namespace', () => {
    const [roleId] = boaRole(template);
    template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', {
      Namespace: 'boa',
      ServiceAccount: 'boa',
      RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
    });
  });

  it('leaves no IRSA role annotation on the service account, which no OIDC provider or trust could honour', () => {
    // The CDK's ServiceAccount writes eks.amazonaws.com/role-arn even for Pod Identity: it names a role
    // whose trust admits no web identity, and IRSA comes first in the SDK's credential chain.
    const account = kubernetesObjects(template).get('ServiceAccount/boa');
    expect(account.metadata).toMatchObject({ name: 'boa', namespace: 'boa' });
    expect(account.metadata.annotations ?? {}).not.toHaveProperty(['eks.amazonaws.com/role-arn']);
    template.resourceCountIs('Custom::AWSCDK-OpenIdConnectProvider', 0);
  });

  it("may be assumed only for boa's service account in this cluster, by the session tags Pod Identity sets", () => {
    // Found in a deploy review: trusted with no condition, any Pod Identity association in the account
    // (another cluster, the jobs' namespace) could give its pods boa's role, its node terminations and
    // the operator token with it.
    const [roleId, role] = boaRole(template);
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual(
      podIdentityTrust(template, 'boa', 'boa'),
    );
    // The tags the condition reads: the association must not turn them off.
    const association = only(template, 'AWS::EKS::PodIdentityAssociation', {
      RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
    })[1];
    expect(association.Properties.DisableSessionTags ?? false).toBe(false);
  });

  it('allows exactly the node group calls, DescribeInstances, PutMetricData in namespace boa and reading its token secret', () => {
    const [roleId] = boaRole(template);
    const [gpuId] = gpuNodegroup(template);
    const policies = Object.values(
      template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }),
    ) as Resource[];
    expect(policies).toHaveLength(1);
    const statements = policies[0]!.Properties.PolicyDocument.Statement;
    const nodegroupArn = { 'Fn::GetAtt': [gpuId, 'Arn'] };
    expect(statements).toHaveLength(9);
    const [secretId] = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    expect(statements).toEqual(
      expect.arrayContaining([
        // The operator token: GetSecretValue only, on its one secret (test/infra/operator-token.test.ts).
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'secretsmanager:GetSecretValue',
          Resource: { Ref: secretId },
        }),
        // Removing the instances boa chose, and keeping AZRebalance suspended: only the GPU node group's
        // ASG, found by EKS's tags on it.
        expect.objectContaining({
          Effect: 'Allow',
          Action: [
            'autoscaling:SetInstanceProtection',
            'autoscaling:SuspendProcesses',
            'autoscaling:TerminateInstanceInAutoScalingGroup',
          ],
          Resource: '*',
          Condition: {
            StringEquals: {
              'autoscaling:ResourceTag/eks:nodegroup-name': { 'Fn::GetAtt': [gpuId, 'NodegroupName'] },
              'autoscaling:ResourceTag/eks:cluster-name': expect.anything(),
            },
          },
        }),
        expect.objectContaining({
          // Only what src/cloud/aws calls: the group's instances' lifecycle states, its activities.
          Action: [
            'autoscaling:DescribeAutoScalingGroups',
            'autoscaling:DescribeAutoScalingInstances',
            'autoscaling:DescribeScalingActivities',
          ],
          Resource: '*',
        }),
        expect.objectContaining({ Action: 'eks:ListNodegroups' }),
        // Following a node group's update: its own ARN (below) and its cluster's, read-only.
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'eks:DescribeUpdate',
          Resource: expect.objectContaining({ 'Fn::GetAtt': [expect.stringMatching(/Cluster/), 'Arn'] }),
        }),
        // Following a replaced group reads every group's labels, this cluster's only.
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'eks:DescribeNodegroup',
          Resource: {
            'Fn::Join': [
              '',
              [
                expect.objectContaining({ 'Fn::Select': expect.anything() }),
                ':nodegroup/',
                expect.anything(),
                '/*/*',
              ],
            ],
          },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: ['eks:DescribeNodegroup', 'eks:DescribeUpdate', 'eks:UpdateNodegroupConfig'],
          Resource: nodegroupArn,
        }),
        expect.objectContaining({ Effect: 'Allow', Action: 'ec2:DescribeInstances', Resource: '*' }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'cloudwatch:PutMetricData',
          Resource: '*',
          Condition: { StringEquals: { 'cloudwatch:namespace': 'boa' } },
        }),
      ]),
    );
    // "*" only where IAM has no resource-level permissions.
    for (const statement of statements) {
      const actions = [statement.Action].flat();
      if (statement.Resource === '*') {
        const unscoped = [
          'ec2:DescribeInstances',
          'cloudwatch:PutMetricData',
          'autoscaling:DescribeAutoScalingGroups',
          'autoscaling:DescribeScalingActivities',
          'autoscaling:DescribeAutoScalingInstances',
        ];
        const tagScoped = [
          'autoscaling:SetInstanceProtection',
          'autoscaling:TerminateInstanceInAutoScalingGroup',
          'autoscaling:SuspendProcesses',
        ];
        expect(actions.every((a: string) => unscoped.includes(a) || tagScoped.includes(a))).toBe(true);
        if (actions.some((a: string) => tagScoped.includes(a))) expect(statement.Condition).toBeDefined();
      }
      if (actions.includes('cloudwatch:PutMetricData')) expect(statement.Condition).toBeDefined();
    }
  });

  it('has no wildcard action anywhere in the stack', () => {
    const actions: string[] = [];
    for (const policy of Object.values(template.findResources('AWS::IAM::Policy')) as Resource[]) {
      for (const statement of policy.Properties.PolicyDocument.Statement)
        actions.push(...[statement.Action].flat());
    }
    expect(actions.length).toBeGreaterThan(5);
    expect(actions.filter((action) => action.includes('*'))).toEqual([]);
  });
});

describe('tear down', () => {
  it('deletes every log group with the stack and keeps only the backup vault', () => {
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup')) as any[];
    expect(logGroups.length).toBeGreaterThan(5);
    for (const group of logGroups) expect(group.DeletionPolicy).toBe('Delete');
    const retained = Object.values(template.toJSON().Resources as Record<string, any>)
      .filter((r) => r.DeletionPolicy === 'Retain')
      .map((r) => r.Type);
    expect(retained).toEqual(['AWS::Backup::BackupVault']);
  });

  it("has every Lambda function log to a group of the stack's that it names, so none is left behind", () => {
    // A group named after its function (/aws/lambda/<name>) is deleted before that function's last
    // invocations (the Kubernetes objects' deletion) and created again by Lambda, outside the stack; so
    // is the group Lambda makes for a function that names none.
    const resources = template.toJSON().Resources as Record<string, any>;
    const functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(5);
    const unowned = functions
      .filter(([, fn]) => {
        const ref = fn.Properties.LoggingConfig?.LogGroup?.Ref;
        const group = ref === undefined ? undefined : resources[ref];
        return group?.Type !== 'AWS::Logs::LogGroup' || group.DeletionPolicy !== 'Delete';
      })
      .map(([id]) => id);
    expect(unowned).toEqual([]);
  });
});

describe('boa workload', () => {
  it('runs one replica from the image built from the Dockerfile, with its token from Secrets Manager', () => {
    const objects = kubernetesObjects(template);
    const deployment = objects.get('Deployment/boa');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const container = deployment.spec.template.spec.containers[0];
    // The image URI is the CDK asset in the bootstrap ECR repository.
    expect(JSON.stringify(container.image)).toContain('cdk-hnb659fds-container-assets');
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [
        e.name,
        e.value ?? e.valueFrom,
      ]),
    );
    expect(env).toMatchObject({
      BOA_CLOUD: 'aws',
      BOA_PORT: '8080',
      BOA_DATA_DIR: '/var/lib/boa',
      BOA_CLUSTER_NAME: 'boa',
      BOA_MAX_NODES: '4',
      BOA_INSTANCE_TYPE: 'g4dn.12xlarge',
      BOA_GPUS_PER_NODE: '4',
      AWS_REGION: 'us-east-1',
    });
    // The secret's ARN, not the token: no Kubernetes Secret holds it.
    expect(JSON.stringify(env.BOA_TOKEN_SECRET_ARN)).toContain('OperatorTokenSecret');
    expect(env).not.toHaveProperty('BOA_TOKEN');
    expect(env.BOA_NODEGROUP_NAME).toContain('NodegroupName');
    expect(env).not.toHaveProperty('BOA_BUDGET');
    // The guard Lambda is deployed by default: boa holds itself to its size when its heartbeat fails.
    expect(env.BOA_GUARD_MINUTES).toBe('15');
    // Without one in the context, boa prices the nodes by their instance type.
    expect(env).not.toHaveProperty('BOA_NODE_PRICE_PER_HOUR');
    expect(deployment.spec.template.spec.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'boa-data' } },
    ]);
    expect(objects.get('PersistentVolumeClaim/boa-data').spec.storageClassName).toBe('boa-gp3');
    expect([...objects.keys()].some((key) => key.startsWith('Job/') || key.startsWith('Secret/'))).toBe(
      false,
    );

    const variantEnv = kubernetesObjects(variant).get('Deployment/boa').spec.template.spec.containers[0].env;
    expect(variantEnv).toEqual(
      expect.arrayContaining([
        { name: 'BOA_BUDGET', value: '40' },
        { name: 'BOA_MAX_NODES', value: '8' },
        { name: 'BOA_NODE_PRICE_PER_HOUR', value: '4.2' },
      ]),
    );
  });

  it('prints the rollout check where a deploy ends, as deploy.md says (the deploy does not wait for boa)', () => {
    const deployment = kubernetesObjects(template).get('Deployment/boa');
    template.hasOutput('RolloutStatusCommand', { Value: 'kubectl -n boa rollout status deploy/boa' });
    const description = template.toJSON().Outputs.RolloutStatusCommand.Description as string;
    expect(description).toContain(`${deployment.spec.progressDeadlineSeconds / 60} minutes`);
  });

  it("tells the jobs' pods boa's in-cluster address (BOA_PUBLIC_URL), never 127.0.0.1", () => {
    const envOf = (t: Template) =>
      Object.fromEntries(
        kubernetesObjects(t)
          .get('Deployment/boa')
          .spec.template.spec.containers[0].env.map((e: { name: string; value: string }) => [
            e.name,
            e.value,
          ]),
      );
    // Exposed, `boa` listens on 80: the pods use a ClusterIP Service whose port is the container's.
    expect(envOf(variant).BOA_PUBLIC_URL).toBe('http://boa-internal.boa.svc.cluster.local:8080');
    const internal = kubernetesObjects(variant).get('Service/boa-internal');
    expect(internal.spec).toMatchObject({ type: 'ClusterIP', ports: [{ port: 8080, targetPort: 'http' }] });
    expect(internal.spec.selector).toEqual(kubernetesObjects(variant).get('Service/boa').spec.selector);
  });

  it('gives the jobs the same address with or without exposeApi, so turning it on or off cuts off no running job', () => {
    // Found in a deploy review: the default was `boa` on 8080, which an exposed stack moves to 80, and an
    // exposed stack's `boa-internal` was pruned when exposeApi went off; a running pod's BOA_URL does not
    // change, so its reports found nothing there until its next generation.
    const urlOf = (t: Template) =>
      kubernetesObjects(t)
        .get('Deployment/boa')
        .spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'BOA_PUBLIC_URL')
        .value;
    expect(urlOf(template)).toBe(urlOf(variant));
    expect(kubernetesObjects(template).get('Service/boa-internal')).toEqual(
      kubernetesObjects(variant).get('Service/boa-internal'),
    );
  });

  it('gives a port-forward command that works with or without exposeApi (which moves `boa` to 80 or 443)', () => {
    // Found in a deploy review: `svc/boa 8080:8080` failed on an exposed stack ("does not have a service
    // port 8080"), in docs/deploy.md and on the CloudWatch dashboard; boa-internal is on 8080 either way.
    for (const t of [template, variant]) {
      const command = t.toJSON().Outputs.PortForwardCommand.Value as string;
      expect(command).toBe('kubectl -n boa port-forward svc/boa-internal 8080:8080');
      const forwarded = Number(command.split(':').at(-1));
      const ports = kubernetesObjects(t)
        .get('Service/boa-internal')
        .spec.ports.map((p: { port: number }) => p.port);
      expect(ports).toContain(forwarded);
      const [, dashboard] = only(t, 'AWS::CloudWatch::Dashboard');
      expect(JSON.stringify(dashboard.Properties.DashboardBody)).toContain(
        command.replace('kubectl -n boa ', ''),
      );
    }
    const docs = ['docs/deploy.md', 'docs/service.md'].map((f) =>
      readFileSync(path.join(REPO_ROOT, f), 'utf8'),
    );
    for (const text of docs) expect(text).not.toMatch(/port-forward svc\/boa 8080/);
  });

  it('keeps the API inside the cluster by default and behind a CIDR-restricted NLB when exposed', () => {
    expect(kubernetesObjects(template).get('Service/boa').spec.type).toBe('ClusterIP');
    const exposed = kubernetesObjects(variant).get('Service/boa');
    expect(exposed.spec.type).toBe('LoadBalancer');
    expect(exposed.spec.loadBalancerSourceRanges).toEqual(['203.0.113.0/24', '198.51.100.7/32']);
  });

  it('declares the image as a Docker asset of the repository (built by cdk deploy, only hashed at synth)', () => {
    const images = Object.values(assetManifest.dockerImages ?? {});
    expect(images).toHaveLength(1);
    const source = images[0]!.source;
    expect(path.resolve(source.directory!)).toBe(REPO_ROOT);
    expect(source.dockerFile ?? 'Dockerfile').toBe('Dockerfile');
    expect(source.platform).toBe('linux/amd64');
    expect(existsSync(path.join(REPO_ROOT, 'Dockerfile'))).toBe(true);
  });
});

describe('monitoring', () => {
  it("alarms when the window's paid average exceeds the window's budget by 10%", () => {
    const [, alarm] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('paid-average-over-budget'),
    });
    expect(alarm.Properties).toMatchObject({
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
    });
    const queries = alarm.Properties.Metrics as any[];
    const expression = queries.find((q) => q.Expression);
    // The window's budget (the budgets in force over it), as GET /v1/budget and /metrics hold the paid
    // average to; not the budget now, which a deep cut leaves below the window's paid average for hours.
    expect(expression.Expression).toBe('paid - 1.1 * windowBudget');
    const stat = (id: string) => queries.find((q) => q.Id === id).MetricStat;
    const dimensions = [{ Name: 'Cluster', Value: 'boa' }];
    expect(stat('paid')).toMatchObject({
      Metric: { Namespace: 'boa', MetricName: 'PaidGpuHoursPerHourAverage', Dimensions: dimensions },
      Period: 300,
      Stat: 'Average',
    });
    expect(stat('windowBudget')).toMatchObject({
      Metric: { Namespace: 'boa', MetricName: 'WindowBudgetGpuHoursPerHour', Dimensions: dimensions },
      Period: 300,
      Stat: 'Average',
    });
    expect(queries.map((q) => q.Id).sort()).toEqual(['expr_1', 'paid', 'windowBudget'].sort());
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  it("lets every alarm publish to its topic: the topic's own policy replaces SNS's default one", () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    const topics = new Set(
      alarms
        .flatMap((a) => [...(a.Properties.AlarmActions ?? []), ...(a.Properties.OKActions ?? [])])
        .map((action: { Ref: string }) => action.Ref),
    );
    expect(topics.size).toBe(1);
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy')).filter((p) =>
      p.Properties.Topics.some((t: { Ref: string }) => topics.has(t.Ref)),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0]!.Properties.PolicyDocument.Statement as any[];
    const allow = statements.find(
      (st) =>
        st.Effect === 'Allow' &&
        st.Action === 'sns:Publish' &&
        st.Principal?.Service === 'cloudwatch.amazonaws.com',
    );
    expect(allow).toBeDefined();
    // Only this account's alarms, and only boa's for this cluster (every alarm is named boa-<cluster>-...).
    expect(allow.Condition.StringEquals['aws:SourceAccount']).toBeDefined();
    expect(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn'])).toContain(':alarm:boa-boa-*');
    for (const alarm of alarms) expect(alarm.Properties.AlarmName).toMatch(/^boa-boa-/);
  });

  it('has a dashboard of budget vs paid and allocated GPU-hours, nodes and jobs', () => {
    const [, dashboard] = only(template, 'AWS::CloudWatch::Dashboard');
    expect(dashboard.Properties.DashboardName).toBe('boa-boa');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const name of METRIC_NAMES) expect(body).toContain(`\\"${name}\\"`);
    for (const title of ['Budget vs paid and allocated', 'GPU nodes', 'Jobs']) expect(body).toContain(title);
    expect(body).toContain('\\"boa\\",\\"BudgetGpuHoursPerHour\\",\\"Cluster\\",\\"boa\\"');
  });

  it('shows the same current numbers as the service dashboard and points to it for the frontier', () => {
    const [, dashboard] = only(template, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    // One single-value row, "Now": budget, paid average, allocated, predicted JCT, nodes.
    expect(body).toMatch(/\\"view\\":\\"singleValue\\".*\\"title\\":\\"Now\\"/);
    for (const label of ['Budget', 'Allocated by the plan', 'Nodes desired', 'Nodes running']) {
      expect(body).toContain(`\\"label\\":\\"${label}\\"`);
    }
    expect(body).toContain('port-forward svc/boa-internal 8080:8080');
  });
});
