import * as path from 'node:path';
import { IgnoreMode, Stack } from 'aws-cdk-lib';
import * as ecrAssets from 'aws-cdk-lib/aws-ecr-assets';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { Construct, type IDependable } from 'constructs';
import { NODE_ROLE_LABEL } from './cluster.ts';
import {
  BOA_NAMESPACE,
  BOA_SERVICE_ACCOUNT,
  deploymentManifest,
  IN_CLUSTER_URL,
  internalServiceManifest,
  namespaceManifest,
  serviceManifest,
  storageManifests,
} from './k8s/boa.ts';
import { JobsIdentity } from './jobs-identity.ts';
import { executorRbacManifests, jobsNamespaceManifest } from './k8s/jobs-rbac.ts';
import { networkPolicyManifests } from './k8s/network-policies.ts';

/** Size of boa's data volume (SQLite database), GiB. */
export const DATA_VOLUME_GIB = 10;

/** The repository root: the Docker build context of boa's image. */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/**
 * What boa's image is built from: the files the Dockerfile copies, and nothing else. The build context,
 * and so the asset's hash and image tag, is only these (IMAGE_EXCLUDE; .dockerignore says the same for a
 * plain `docker build`). A context of the whole checkout less a few folders (as before 2026-12-02) gave
 * a new tag for any change to docs/, README.md, examples/ or clients/, or a file left in the checkout
 * (`boa frontier --svg frontier.svg`, a local service's data/): each deploy then pushed a "new" image
 * and the Deployment replaced boa's pod (Recreate: the API down until its first tick) for nothing.
 */
export const IMAGE_INPUTS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'src',
  'data/profiles.json',
] as const;

/** Everything out, then the image's inputs back in (Docker's ignore rules: the last match wins). */
export const IMAGE_EXCLUDE = ['*', ...IMAGE_INPUTS.map((input) => `!${input}`), '**/*.sqlite*'];

/** boa's image asset as the stack declares it; `directory` for a test's checkout in miniature. */
export function imageAssetProps(directory = REPO_ROOT): ecrAssets.DockerImageAssetProps {
  return {
    directory,
    platform: ecrAssets.Platform.LINUX_AMD64,
    exclude: IMAGE_EXCLUDE,
    ignoreMode: IgnoreMode.DOCKER,
  };
}

export interface BoaWorkloadProps {
  readonly cluster: eks.Cluster;
  readonly clusterName: string;
  readonly nodegroupName: string;
  readonly maxNodes: number;
  readonly instanceType: string;
  readonly gpusPerNode: number;
  readonly budget?: number;
  /** The budget guard Lambda's silence, when it is deployed: boa then holds itself to its rule first. */
  readonly guardMinutes?: number;
  /** Dollars per node-hour for boa's $ figures; unset: boa prices the instance type itself. */
  readonly nodePricePerHour?: number;
  /** Where the Kubernetes executor runs jobs' pods (BOA_JOBS_NAMESPACE). */
  readonly jobsNamespace: string;
  /** An existing IAM role for the jobs' pods (context jobsRoleArn); unset: they run with none. */
  readonly jobsRoleArn?: string;
  /** Secrets in the jobs' namespace for private registries (BOA_IMAGE_PULL_SECRETS). */
  readonly jobsImagePullSecrets?: readonly string[];
  /** The `boa-backup` tag value on boa's volume (context `backupTag`). */
  readonly backupTag: string;
  /** The Secrets Manager secret of the operator token (BOA_TOKEN_SECRET_ARN). */
  readonly tokenSecretArn: string;
  readonly loadBalancer?: { readonly sourceRanges: readonly string[]; readonly certificateArn?: string };
  /** The EBS CSI add-on: created before (and deleted after) everything in boa's namespace, volume included. */
  readonly volumeDriver: IDependable;
  /** boa's service account (made in the namespace), created before the Deployment that uses it. */
  readonly serviceAccount: IDependable;
}

/**
 * boa itself: its image (built from the repository's Dockerfile by `cdk deploy`, only hashed at synth),
 * its namespace, data volume, one-replica Deployment and Service. The operator token is not here: boa
 * reads it from Secrets Manager (infra/operator-token.ts).
 */
export class BoaWorkload extends Construct {
  readonly image: ecrAssets.DockerImageAsset;
  readonly namespace: eks.KubernetesManifest;
  readonly app: eks.KubernetesManifest;

  constructor(scope: Construct, id: string, props: BoaWorkloadProps) {
    super(scope, id);
    const { cluster } = props;
    const nodeSelector = { [NODE_ROLE_LABEL]: 'system' };

    this.image = new ecrAssets.DockerImageAsset(this, 'Image', imageAssetProps());

    this.namespace = cluster.addManifest('Namespace', namespaceManifest());
    this.namespace.node.addDependency(props.volumeDriver);

    const storage = cluster.addManifest('Storage', ...storageManifests(DATA_VOLUME_GIB, props.backupTag));
    storage.node.addDependency(this.namespace);

    // The jobs' namespace and exactly the access the executor needs there (infra/k8s/jobs-rbac.ts). Not
    // pruned: with the prune label, a deploy with a new jobsNamespace ran `kubectl apply --prune`, which
    // deleted the old namespace, and with it the running jobs' pods and the users' checkpoint claims
    // (found in a deploy review). The scope and id are addManifest's, so deployed stacks keep the
    // resource (a new one would `kubectl create` a namespace that exists, and fail).
    const jobsNamespace = new eks.KubernetesManifest(cluster, 'manifest-JobsNamespace', {
      cluster,
      manifest: [jobsNamespaceManifest(props.jobsNamespace)],
      prune: false,
    });
    const executorRbac = cluster.addManifest(
      'ExecutorRbac',
      ...executorRbacManifests({
        jobsNamespace: props.jobsNamespace,
        serviceAccount: { name: BOA_SERVICE_ACCOUNT, namespace: BOA_NAMESPACE },
      }),
    );
    executorRbac.node.addDependency(jobsNamespace, this.namespace);

    const jobsIdentity = props.jobsRoleArn
      ? new JobsIdentity(this, 'JobsIdentity', {
          cluster,
          namespace: props.jobsNamespace,
          roleArn: props.jobsRoleArn,
        })
      : undefined;
    jobsIdentity?.serviceAccount.node.addDependency(jobsNamespace);

    const networkPolicies = cluster.addManifest(
      'NetworkPolicies',
      ...networkPolicyManifests({
        jobsNamespace: props.jobsNamespace,
        exposed: props.loadBalancer !== undefined,
      }),
    );
    networkPolicies.node.addDependency(jobsNamespace, this.namespace);

    const env: Record<string, string> = {
      BOA_CLUSTER_NAME: props.clusterName,
      BOA_NODEGROUP_NAME: props.nodegroupName,
      AWS_REGION: Stack.of(this).region,
      BOA_MAX_NODES: String(props.maxNodes),
      BOA_INSTANCE_TYPE: props.instanceType,
      BOA_GPUS_PER_NODE: String(props.gpusPerNode),
      BOA_JOBS_NAMESPACE: props.jobsNamespace,
      BOA_TOKEN_SECRET_ARN: props.tokenSecretArn,
      // The jobs' pods get this as BOA_URL; boa's default (127.0.0.1) would be the pod itself.
      BOA_PUBLIC_URL: IN_CLUSTER_URL,
      ...(props.budget !== undefined ? { BOA_BUDGET: String(props.budget) } : {}),
      ...(props.guardMinutes !== undefined ? { BOA_GUARD_MINUTES: String(props.guardMinutes) } : {}),
      ...(props.nodePricePerHour !== undefined
        ? { BOA_NODE_PRICE_PER_HOUR: String(props.nodePricePerHour) }
        : {}),
      ...(jobsIdentity ? { BOA_JOBS_SERVICE_ACCOUNT: jobsIdentity.serviceAccountName } : {}),
      ...(props.jobsImagePullSecrets?.length
        ? { BOA_IMAGE_PULL_SECRETS: props.jobsImagePullSecrets.join(',') }
        : {}),
    };
    this.app = cluster.addManifest(
      'App',
      deploymentManifest({
        image: this.image.imageUri,
        env,
        nodeSelector,
        ...(props.loadBalancer ? { loadBalancer: props.loadBalancer } : {}),
      }),
      serviceManifest(props.loadBalancer ? { loadBalancer: props.loadBalancer } : {}),
      internalServiceManifest(),
    );
    this.app.node.addDependency(this.namespace, storage, props.serviceAccount, executorRbac);
    // A pod naming a service account that does not exist yet is refused, and one started before its
    // association gets no credentials: boa (re)starts only after both exist.
    if (jobsIdentity) this.app.node.addDependency(jobsIdentity);
  }
}
