/**
 * The EC2 GPU instance types boa knows: GPUs per instance (the NVIDIA x86 G families) and, for g4dn,
 * the on-demand Linux price per hour in us-east-1. One table for the service (the defaults of
 * gpusPerNode and nodePricePerHour) and the CDK app (infra/context.ts).
 *
 * Sources: GPUs, the AWS instance type pages (aws.amazon.com/ec2/instance-types/g4, g5, g6); prices,
 * the EC2 On-Demand pricing page (aws.amazon.com/ec2/pricing/on-demand, Linux, US East (N. Virginia)).
 * Other regions and later price changes are not here: an explicit nodePricePerHour wins.
 */
export interface InstanceTypeFacts {
  readonly gpus: number;
  /** Dollars per instance-hour, on demand, us-east-1; absent where boa does not know it. */
  readonly pricePerHour?: number;
}

const TYPES = new Map<string, InstanceTypeFacts>([
  ['g4dn.xlarge', { gpus: 1, pricePerHour: 0.526 }],
  ['g4dn.2xlarge', { gpus: 1, pricePerHour: 0.752 }],
  ['g4dn.4xlarge', { gpus: 1, pricePerHour: 1.204 }],
  ['g4dn.8xlarge', { gpus: 1, pricePerHour: 2.176 }],
  ['g4dn.16xlarge', { gpus: 1, pricePerHour: 4.352 }],
  ['g4dn.12xlarge', { gpus: 4, pricePerHour: 3.912 }],
  ['g4dn.metal', { gpus: 8, pricePerHour: 7.824 }],
  ['g5.xlarge', { gpus: 1 }],
  ['g5.2xlarge', { gpus: 1 }],
  ['g5.4xlarge', { gpus: 1 }],
  ['g5.8xlarge', { gpus: 1 }],
  ['g5.16xlarge', { gpus: 1 }],
  ['g5.12xlarge', { gpus: 4 }],
  ['g5.24xlarge', { gpus: 4 }],
  ['g5.48xlarge', { gpus: 8 }],
  ['g6.xlarge', { gpus: 1 }],
  ['g6.2xlarge', { gpus: 1 }],
  ['g6.4xlarge', { gpus: 1 }],
  ['g6.8xlarge', { gpus: 1 }],
  ['g6.16xlarge', { gpus: 1 }],
  ['g6.12xlarge', { gpus: 4 }],
  ['g6.24xlarge', { gpus: 4 }],
  ['g6.48xlarge', { gpus: 8 }],
]);

/** What boa knows of an instance type, or undefined for one outside the table. */
export function instanceTypeFacts(instanceType: string): InstanceTypeFacts | undefined {
  return TYPES.get(instanceType);
}

/** The instance types of the table, for errors that say what is allowed. */
export function knownInstanceTypes(): string[] {
  return [...TYPES.keys()];
}
