/**
 * The CDK app's settings, read from CDK context (`-c key=value` or cdk.json) and validated once.
 * Every key is documented in docs/deploy.md; defaults live here only.
 */
import { BOUNDS } from '../src/api/bounds.ts';
import { instanceTypeFacts, knownInstanceTypes } from '../src/core/instance-types.ts';
import { unknownContextKey } from './context-keys.ts';
import { bool, ContextError, type ContextReader, int, list, num, text } from './context-readers.ts';
import { FRACTIONAL_GPU_FAMILIES, instanceFamily, NVIDIA_X86_FAMILIES } from './instance-families.ts';

export interface BoaConfig {
  /** Stack name in CloudFormation. */
  readonly stackName: string;
  /** EKS cluster name; also the `Cluster` dimension of boa's metrics. */
  readonly clusterName: string;
  /** Region to deploy into. */
  readonly region: string;
  /** Two availability zones to pin, or undefined to take the region's first two. */
  readonly availabilityZones?: readonly [string, string];
  /** Initial budget in GPU-hours per hour (BOA_BUDGET), or undefined to start without one. */
  readonly budget?: number;
  /** Largest size of the GPU node group (and BOA_MAX_NODES). */
  readonly maxGpuNodes: number;
  /** EC2 instance type of the GPU node group. */
  readonly instanceType: string;
  /** GPUs on one instance of that type (BOA_GPUS_PER_NODE). */
  readonly gpusPerNode: number;
  /** Dollars per node-hour for boa's $ figures (BOA_NODE_PRICE_PER_HOUR); unset: boa's table's price. */
  readonly nodePricePerHour?: number;
  /** Root volume of each GPU node, GiB (container images and scratch data). */
  readonly gpuNodeDiskGiB: number;
  /** CIDRs allowed to reach the public EKS API endpoint and, when exposed, boa's load balancer. */
  readonly allowedApiCidrs: readonly string[];
  /** Put boa's API behind an internet-facing NLB restricted to allowedApiCidrs. */
  readonly exposeApi: boolean;
  /** ACM certificate for the NLB's TLS listener; without one an exposed API is plain HTTP. */
  readonly apiCertificateArn?: string;
  /** Email address subscribed to the budget alarm topic. */
  readonly alarmEmail?: string;
  /**
   * The IAM users and roles (ARNs) that may assume the cluster-admin role: required, so the role is
   * never open to the whole account (its root principal).
   */
  readonly adminPrincipalArns: readonly string[];
  /** Namespace of the jobs' pods and services (BOA_JOBS_NAMESPACE); boa may manage pods only there. */
  readonly jobsNamespace: string;
  /**
   * An existing IAM role the jobs' pods get through EKS Pod Identity (their service account,
   * BOA_JOBS_SERVICE_ACCOUNT), e.g. for S3 checkpoints; unset: the pods run with no AWS role.
   */
  readonly jobsRoleArn?: string;
  /** Secrets in the jobs' namespace for private registries (BOA_IMAGE_PULL_SECRETS); unset: none. */
  readonly jobsImagePullSecrets?: readonly string[];
  /** The budget guard Lambda (infra/budget-guard.ts); its heartbeat alarm is there either way. */
  readonly budgetGuard: boolean;
  /** Minutes of silence from boa before the heartbeat alarm fires and the guard acts. */
  readonly guardMinutes: number;
  /**
   * Value of the `boa-backup` tag on boa's volume, which AWS Backup selects it by. A selection by tag
   * is account-wide, so a second stack in the same account and region needs its own value, set before
   * its first deploy: a StorageClass's parameters cannot change afterwards.
   */
  readonly backupTag: string;
}

export { ContextError, type ContextReader } from './context-readers.ts';

export const DEFAULTS = {
  stackName: 'boa',
  clusterName: 'boa',
  region: 'us-east-1',
  maxGpuNodes: 4,
  instanceType: 'g4dn.12xlarge',
  gpuNodeDiskGiB: 200,
  jobsNamespace: 'boa-jobs',
  guardMinutes: 15,
  backupTag: 'daily',
} as const;

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export function checkCidr(cidr: string): string {
  const match = CIDR.exec(cidr);
  const ok =
    match !== null && match.slice(1, 5).every((octet) => Number(octet) <= 255) && Number(match[5]) <= 32;
  if (!ok) throw new ContextError(`"${cidr}" in allowedApiCidrs is not an IPv4 CIDR such as 203.0.113.0/24`);
  return cidr;
}

const NAME = /^[a-zA-Z][a-zA-Z0-9-]{0,62}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const INSTANCE_TYPE = /^[a-z][a-z0-9-]*\.[a-z0-9]+$/;
/** A role's ARN, path allowed (arn:aws:iam::123456789012:role/teams/ml/checkpoints). */
const IAM_ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/([\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;
/** A Kubernetes object name (DNS subdomain), as a Secret's must be. */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Refuses a context key that is neither boa's nor CDK's own, naming the closest of boa's. */
export function checkContextKeys(keys: Iterable<string>): void {
  const problem = unknownContextKey(keys);
  if (problem) throw new ContextError(problem);
}

/** The app's node, as far as reading its context goes (a CDK App's node is one). */
export interface ContextNode {
  tryGetContext(key: string): unknown;
  getAllContext(): Record<string, unknown>;
}

/** The config of a CDK app: its context keys checked, then read (app.ts and the tests' synth alike). */
export function readAppConfig(
  node: ContextNode,
  env: Readonly<Record<string, string | undefined>> = {},
): BoaConfig {
  checkContextKeys(Object.keys(node.getAllContext()));
  return readConfig((key) => node.tryGetContext(key), env);
}

/** Every cdk command builds the app (bootstrap and destroy too), so each needs the required settings. */
const EVERY_COMMAND =
  'Every cdk command builds the app, bootstrap and destroy included: pass it to each with -c, or put it in cdk.json\'s "context" once';

/** Validates the context into a config; throws ContextError naming the key at fault. */
export function readConfig(
  read: ContextReader,
  env: Readonly<Record<string, string | undefined>> = {},
): BoaConfig {
  const stackName = text(read, 'stackName') ?? DEFAULTS.stackName;
  const clusterName = text(read, 'clusterName') ?? DEFAULTS.clusterName;
  for (const [key, value] of [
    ['stackName', stackName],
    ['clusterName', clusterName],
  ] as const) {
    if (!NAME.test(value)) {
      throw new ContextError(
        `context "${key}" must be 1 to 63 characters, a letter then letters, digits or '-', got "${value}"` +
          (value.length > 63 ? ` (${value.length} characters)` : ''),
      );
    }
  }

  const region = text(read, 'region') ?? env.CDK_DEFAULT_REGION ?? DEFAULTS.region;
  if (!REGION.test(region)) throw new ContextError(`context "region" is not an AWS region name: "${region}"`);

  const zones = list(read, 'availabilityZones');
  // A zone is the region's name and a letter (us-east-1a), or a Local Zone's suffix (us-east-1-bos-1a).
  // EKS needs subnets in two different zones: one zone twice fails only at deploy time.
  const isZone = (zone: string) =>
    zone.startsWith(region) && /^([a-z]|-[a-z0-9-]+)$/.test(zone.slice(region.length));
  if (zones.length !== 0 && (zones.length !== 2 || zones[0] === zones[1] || !zones.every(isZone))) {
    throw new ContextError(
      `context "availabilityZones" must name two different zones of ${region}, e.g. ${region}a,${region}b; ` +
        `got ${zones.join(',')}`,
    );
  }

  const budget = num(read, 'budget');

  const maxGpuNodes = int(read, 'maxGpuNodes', 1, 100) ?? DEFAULTS.maxGpuNodes;

  const instanceType = text(read, 'instanceType') ?? DEFAULTS.instanceType;
  if (!INSTANCE_TYPE.test(instanceType)) {
    throw new ContextError(`context "instanceType" is not an EC2 instance type: "${instanceType}"`);
  }
  if (FRACTIONAL_GPU_FAMILIES.includes(instanceFamily(instanceType))) {
    throw new ContextError(
      `context "instanceType" is "${instanceType}", of family ${instanceFamily(instanceType)}, whose ` +
        'instances have a fraction of one GPU: boa counts whole GPUs; allowed families: ' +
        NVIDIA_X86_FAMILIES.join(', '),
    );
  }
  if (!NVIDIA_X86_FAMILIES.includes(instanceFamily(instanceType))) {
    throw new ContextError(
      `context "instanceType" is "${instanceType}", whose family ${instanceFamily(instanceType)} the GPU node ` +
        `group's AMI (EKS AL2023 NVIDIA x86_64) does not support; allowed families: ` +
        NVIDIA_X86_FAMILIES.join(', '),
    );
  }
  // A family boa's table covers whole (g4dn, g5, g6) has no other type: one outside it is a typo that
  // synth would pass with gpusPerNode and EKS refuse only once the cluster is up, some 20 minutes into the
  // deploy, which then rolls back (found in an operator review: g4dn.12xlarg, g4dn.48xlarge).
  const familyTypes = knownInstanceTypes().filter((t) => instanceFamily(t) === instanceFamily(instanceType));
  if (familyTypes.length > 0 && !familyTypes.includes(instanceType)) {
    throw new ContextError(
      `context "instanceType" is "${instanceType}", which is not an instance type of family ` +
        `${instanceFamily(instanceType)}; its types are ${familyTypes.join(', ')}`,
    );
  }
  const known = instanceTypeFacts(instanceType)?.gpus;
  const gpusPerNode = int(read, 'gpusPerNode', 1, 16) ?? known;
  // boa refuses to start with a contradicting count (service/config-instance.ts): say so at synth.
  if (known !== undefined && gpusPerNode !== known) {
    throw new ContextError(
      `context "gpusPerNode" is ${gpusPerNode}, but ${instanceType} has ${known} GPUs: leave it unset or set it to ${known}`,
    );
  }
  if (gpusPerNode === undefined) {
    throw new ContextError(
      `instance type ${instanceType} is not in the app's table of NVIDIA x86 instances; ` +
        'set context "gpusPerNode" to the number of GPUs it has',
    );
  }

  // The service refuses to start below one whole node (its default classes run on 1 GPU and nodes are
  // paid whole) or above PUT /v1/budget's bound: said at synth, not by a pod that exits on a fresh
  // volume (found in review).
  if (budget !== undefined && !(budget >= gpusPerNode && budget <= BOUNDS.budget)) {
    throw new ContextError(
      `context "budget" must be a number of GPU-hours per hour from ${gpusPerNode} (one ${instanceType} node, ` +
        `paid whole) to ${BOUNDS.budget}, got ${budget}`,
    );
  }

  const nodePricePerHour = num(read, 'nodePricePerHour');
  if (nodePricePerHour !== undefined && !(nodePricePerHour > 0)) {
    throw new ContextError(
      `context "nodePricePerHour" must be a positive number of dollars per node-hour, got ${nodePricePerHour}`,
    );
  }

  const gpuNodeDiskGiB = int(read, 'gpuNodeDiskGiB', 20, 16384) ?? DEFAULTS.gpuNodeDiskGiB;

  const allowedApiCidrs = list(read, 'allowedApiCidrs').map(checkCidr);
  if (allowedApiCidrs.length === 0) {
    throw new ContextError(
      'context "allowedApiCidrs" is required: the CIDRs that may reach the EKS API endpoint (and an exposed API), ' +
        'e.g. -c allowedApiCidrs=203.0.113.0/24; the endpoint is never open to 0.0.0.0/0 by default. ' +
        EVERY_COMMAND,
    );
  }
  const exposeApi = bool(read, 'exposeApi') ?? false;
  if (exposeApi && allowedApiCidrs.length === 0) {
    throw new ContextError(
      'context "exposeApi" needs "allowedApiCidrs": the load balancer is never opened to the whole internet',
    );
  }
  const apiCertificateArn = text(read, 'apiCertificateArn');
  // The NLB takes a certificate of its own region only; any other deploys "fine" and leaves the Service
  // without a load balancer, the reason only in its Kubernetes events.
  const acmInRegion = new RegExp(`^arn:aws[a-z-]*:acm:${region}:\\d{12}:certificate/[A-Za-z0-9-]+$`);
  if (apiCertificateArn !== undefined && !acmInRegion.test(apiCertificateArn)) {
    throw new ContextError(
      `context "apiCertificateArn" must be an ACM certificate in ${region}, the region boa deploys to ` +
        `(arn:aws:acm:${region}:ACCOUNT:certificate/ID), got "${apiCertificateArn}"`,
    );
  }
  if (apiCertificateArn !== undefined && !exposeApi) {
    throw new ContextError('context "apiCertificateArn" only applies with exposeApi=true');
  }

  const alarmEmail = text(read, 'alarmEmail');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) {
    throw new ContextError(`context "alarmEmail" is not an email address: "${alarmEmail}"`);
  }
  // adminPrincipalArn (one ARN) is still read, as one more name on the list.
  const adminPrincipalArns = [
    ...list(read, 'adminPrincipalArns'),
    ...(text(read, 'adminPrincipalArn') !== undefined ? [text(read, 'adminPrincipalArn')!] : []),
  ];
  for (const arn of adminPrincipalArns) {
    if (!/^arn:aws[a-z-]*:iam::\d{12}:(user|role)\/.+$/.test(arn)) {
      throw new ContextError(`context "adminPrincipalArns" must list IAM user or role ARNs, got "${arn}"`);
    }
  }
  if (adminPrincipalArns.length === 0) {
    throw new ContextError(
      'context "adminPrincipalArns" is required: the IAM users or roles that may assume the cluster-admin role, ' +
        'e.g. -c adminPrincipalArns=arn:aws:iam::123456789012:role/ops (the account root is never trusted). ' +
        EVERY_COMMAND,
    );
  }

  const jobsNamespace = text(read, 'jobsNamespace') ?? DEFAULTS.jobsNamespace;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(jobsNamespace) || notForJobs(jobsNamespace)) {
    throw new ContextError(
      `context "jobsNamespace" must be a DNS label of a namespace of its own, not boa's ("boa"), "default" ` +
        `or a kube-* system namespace, got "${jobsNamespace}"`,
    );
  }

  const jobsRoleArn = text(read, 'jobsRoleArn');
  if (jobsRoleArn !== undefined && !IAM_ROLE_ARN.test(jobsRoleArn)) {
    throw new ContextError(
      `context "jobsRoleArn" must be the ARN of an existing IAM role, arn:aws:iam::ACCOUNT:role/NAME (the ` +
        `role the jobs' pods get through EKS Pod Identity), got "${jobsRoleArn}"`,
    );
  }
  // EKS Pod Identity takes a role of the cluster's own account only (another account's is reached by role
  // chaining, which the stack does not set up): said at synth, where the account is known, not by the
  // association, made after the cluster, whose failure rolls the deploy back.
  const roleAccount = jobsRoleArn?.split(':')[4];
  const account = env.CDK_DEFAULT_ACCOUNT;
  if (
    roleAccount !== undefined &&
    account !== undefined &&
    /^\d{12}$/.test(account) &&
    roleAccount !== account
  ) {
    throw new ContextError(
      `context "jobsRoleArn" is a role of account ${roleAccount}, but the stack deploys to account ${account}: ` +
        `EKS Pod Identity takes a role of the cluster's own account (arn:aws:iam::${account}:role/NAME)`,
    );
  }
  const jobsImagePullSecrets = list(read, 'jobsImagePullSecrets');
  for (const name of jobsImagePullSecrets) {
    if (!SECRET_NAME.test(name)) {
      throw new ContextError(
        `context "jobsImagePullSecrets" must list names of Secrets in the jobs' namespace (lowercase ` +
          `letters, digits, '-' and '.', at most 253), got "${name}"`,
      );
    }
  }

  const budgetGuard = bool(read, 'budgetGuard') ?? true;
  const guardMinutes = int(read, 'guardMinutes', 5, 1440) ?? DEFAULTS.guardMinutes;

  const backupTag = text(read, 'backupTag') ?? DEFAULTS.backupTag;
  // AWS tag value characters, less '=' which the CSI driver's key=value parameter splits on.
  if (!/^[a-zA-Z0-9_.:/+@-]{1,128}$/.test(backupTag)) {
    throw new ContextError(
      `context "backupTag" must be 1 to 128 letters, digits or _ . : / + @ -, got "${backupTag}"`,
    );
  }

  return {
    budgetGuard,
    guardMinutes,
    backupTag,
    stackName,
    clusterName,
    region,
    ...(zones.length === 2 ? { availabilityZones: [zones[0], zones[1]] as [string, string] } : {}),
    ...(budget !== undefined ? { budget } : {}),
    maxGpuNodes,
    instanceType,
    gpusPerNode,
    ...(nodePricePerHour !== undefined ? { nodePricePerHour } : {}),
    gpuNodeDiskGiB,
    allowedApiCidrs,
    exposeApi,
    ...(apiCertificateArn !== undefined ? { apiCertificateArn } : {}),
    ...(alarmEmail !== undefined ? { alarmEmail } : {}),
    adminPrincipalArns,
    jobsNamespace,
    ...(jobsRoleArn !== undefined ? { jobsRoleArn } : {}),
    ...(jobsImagePullSecrets.length > 0 ? { jobsImagePullSecrets } : {}),
  };
}

/**
 * Namespaces the jobs may not share: the stack labels the jobs' namespace (baseline Pod Security) and
 * denies all ingress to every pod in it, which in kube-system refuses the node DaemonSets' pods and cuts
 * off CoreDNS.
 */
function notForJobs(namespace: string): boolean {
  return namespace === 'boa' || namespace === 'default' || namespace.startsWith('kube-');
}
