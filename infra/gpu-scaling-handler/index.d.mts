// Types for index.mjs (the Lambda ships as plain JavaScript so synth needs no bundler).

export interface ScalingBounds {
  minSize?: number;
  maxSize?: number;
  desiredSize?: number;
}

export interface Target {
  clusterName: string;
  nodegroupName: string;
  minSize: number;
  maxSize: number;
}

/** The two calls of the AWS SDK v3 aggregated EKS client that the handler uses. */
export interface EksLike {
  describeNodegroup(input: { clusterName: string; nodegroupName: string }): Promise<{
    nodegroup?: { scalingConfig?: ScalingBounds };
  }>;
  updateNodegroupConfig(input: {
    clusterName: string;
    nodegroupName: string;
    scalingConfig: ScalingBounds;
  }): Promise<{ update?: { id?: string } }>;
}

export interface RetryOptions {
  maxAttempts: number;
  retryMs: number;
  sleep(ms: number): Promise<void>;
}

export function planScalingUpdate(
  current: ScalingBounds,
  wanted: { minSize: number; maxSize: number },
): ScalingBounds | undefined;

export function applyBounds(
  eks: EksLike,
  target: Target,
  options: RetryOptions,
): Promise<{ updated: boolean; updateId?: string; scalingConfig?: ScalingBounds }>;

export function readTarget(properties: Record<string, string | undefined>): Target;

export function handler(event: {
  RequestType: 'Create' | 'Update' | 'Delete';
  PhysicalResourceId?: string;
  ResourceProperties: Record<string, string | undefined>;
}): Promise<{ PhysicalResourceId?: string; Data?: Record<string, string> }>;
