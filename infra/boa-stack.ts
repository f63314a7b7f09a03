import { CfnOutput, RemovalPolicies, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { BoaBackup } from './backup.ts';
import { BoaWorkload } from './boa-workload.ts';
import { BoaCluster } from './cluster.ts';
import type { BoaConfig } from './context.ts';
import { GpuNodegroup } from './gpu-nodegroup.ts';
import { ownLambdaLogGroups } from './lambda-log-groups.ts';
import { BoaIdentity } from './iam.ts';
import { BOA_INTERNAL_SERVICE, BOA_NAMESPACE, BOA_PORT, PROGRESS_DEADLINE_SECONDS } from './k8s/boa.ts';
import { Monitoring } from './monitoring.ts';
import { BudgetGuard } from './budget-guard.ts';
import { Network } from './network.ts';
import { OperatorTokenSecret } from './operator-token.ts';
import { suppressNagFindings } from './nag.ts';

export interface BoaStackProps extends StackProps {
  readonly config: BoaConfig;
}

/** Everything boa needs in one account and region: network, cluster, GPU node group, boa, monitoring. */
export class BoaStack extends Stack {
  readonly boaCluster: BoaCluster;
  readonly gpu: GpuNodegroup;
  readonly identity: BoaIdentity;
  readonly workload: BoaWorkload;
  readonly monitoring: Monitoring;
  readonly budgetGuard: BudgetGuard;
  readonly operatorToken: OperatorTokenSecret;

  constructor(scope: Construct, id: string, props: BoaStackProps) {
    super(scope, id, props);
    const { config } = props;
    Tags.of(this).add('app', 'boa');
    Tags.of(this).add('boa:cluster', config.clusterName);

    const network = new Network(this, 'Network', {
      ...(config.availabilityZones ? { availabilityZones: config.availabilityZones } : {}),
    });

    this.boaCluster = new BoaCluster(this, 'Eks', {
      vpc: network.vpc,
      clusterName: config.clusterName,
      allowedApiCidrs: config.allowedApiCidrs,
      adminPrincipalArns: config.adminPrincipalArns,
    });
    const { cluster } = this.boaCluster;

    this.gpu = new GpuNodegroup(this, 'GpuNodes', {
      cluster,
      instanceType: config.instanceType,
      maxNodes: config.maxGpuNodes,
      diskGiB: config.gpuNodeDiskGiB,
    });

    this.identity = new BoaIdentity(this, 'Identity', {
      cluster,
      nodegroupArn: this.gpu.nodegroup.nodegroupArn,
      nodegroupName: this.gpu.nodegroup.nodegroupName,
    });

    this.operatorToken = new OperatorTokenSecret(this, 'OperatorToken', { reader: this.identity.role });

    this.workload = new BoaWorkload(this, 'Boa', {
      cluster,
      clusterName: config.clusterName,
      nodegroupName: this.gpu.nodegroup.nodegroupName,
      maxNodes: config.maxGpuNodes,
      instanceType: config.instanceType,
      gpusPerNode: config.gpusPerNode,
      jobsNamespace: config.jobsNamespace,
      ...(config.jobsRoleArn !== undefined ? { jobsRoleArn: config.jobsRoleArn } : {}),
      ...(config.jobsImagePullSecrets ? { jobsImagePullSecrets: config.jobsImagePullSecrets } : {}),
      backupTag: config.backupTag,
      tokenSecretArn: this.operatorToken.secret.secretArn,
      ...(config.budget !== undefined ? { budget: config.budget } : {}),
      ...(config.budgetGuard ? { guardMinutes: config.guardMinutes } : {}),
      ...(config.nodePricePerHour !== undefined ? { nodePricePerHour: config.nodePricePerHour } : {}),
      ...(config.exposeApi
        ? {
            loadBalancer: {
              sourceRanges: config.allowedApiCidrs,
              ...(config.apiCertificateArn ? { certificateArn: config.apiCertificateArn } : {}),
            },
          }
        : {}),
      volumeDriver: this.boaCluster.ebsCsiAddon,
      serviceAccount: this.identity.serviceAccount,
    });
    // The service account lives in boa's namespace.
    this.identity.serviceAccount.node.addDependency(this.workload.namespace);
    // The bounds after boa's Deployment: a lower maxGpuNodes reaches boa (BOA_MAX_NODES) first, and the
    // bounds handler waits for boa to scale in to it, choosing and draining the nodes itself, rather than
    // lowering the desired size and letting the Auto Scaling group pick busy nodes.
    this.gpu.bounds.node.addDependency(this.workload.app);

    new BoaBackup(this, 'Backup', { key: this.boaCluster.key, backupTag: config.backupTag });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      clusterName: config.clusterName,
      key: this.boaCluster.key,
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
    });
    this.operatorToken.alarmOnFailedRotation(config.clusterName, this.monitoring.topic);

    this.budgetGuard = new BudgetGuard(this, 'BudgetGuard', {
      clusterName: config.clusterName,
      nodegroupName: this.gpu.nodegroup.nodegroupName,
      nodegroupArn: this.gpu.nodegroup.nodegroupArn,
      cluster: { clusterArn: cluster.clusterArn, clusterName: cluster.clusterName },
      gpusPerNode: config.gpusPerNode,
      ...(config.budget !== undefined ? { budget: config.budget } : {}),
      guardMinutes: config.guardMinutes,
      enableGuardLambda: config.budgetGuard,
      topic: this.monitoring.topic,
    });

    new CfnOutput(this, 'GpuNodegroupName', {
      value: this.gpu.nodegroup.nodegroupName,
      description: 'The node group boa resizes (BOA_NODEGROUP_NAME)',
    });
    new CfnOutput(this, 'PortForwardCommand', {
      // boa-internal is on 8080 with or without exposeApi (which moves `boa` to 80 or 443).
      value: `kubectl -n ${BOA_NAMESPACE} port-forward svc/${BOA_INTERNAL_SERVICE} ${BOA_PORT}:${BOA_PORT}`,
      description: 'Reach the API on http://localhost:8080 (after the update-kubeconfig command)',
    });
    // The deploy returns once the Deployment is accepted, not once the new pod is Ready (docs/deploy.md,
    // "The deploy does not wait for boa"): the check to run, printed where a deploy ends.
    new CfnOutput(this, 'RolloutStatusCommand', {
      value: `kubectl -n ${BOA_NAMESPACE} rollout status deploy/boa`,
      description: `Exits 0 once the new boa pod is Ready, 1 if it is not within ${PROGRESS_DEADLINE_SECONDS / 60} minutes (after the update-kubeconfig command)`,
    });
    new CfnOutput(this, 'TokenSecretArn', {
      value: this.operatorToken.secret.secretArn,
      description: "The Secrets Manager secret holding boa's operator token (rotated)",
    });
    new CfnOutput(this, 'TokenCommand', {
      value: `aws secretsmanager get-secret-value --region ${this.region} --secret-id ${this.operatorToken.secret.secretArn} --query SecretString --output text`,
      description: "Prints boa's operator bearer token (the secret's current version)",
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.monitoring.dashboard.dashboardName}`,
    });

    ownLambdaLogGroups(this);
    // `cdk destroy` removes every log group (CDK's default keeps the Lambdas' and the kubectl handler's,
    // stranding them after the stack); the backup vault and boa's volume are kept on purpose.
    RemovalPolicies.of(this).destroy({ applyToResourceTypes: ['AWS::Logs::LogGroup'] });

    suppressNagFindings(this);
  }
}
