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
  /** Reads of the node group in all, shared by the waits for another update and for boa to scale in. */
  maxAttempts: number;
  retryMs: number;
  sleep(ms: number): Promise<void>;
  /** The Lambda's remaining time: waiting stops early when it runs short. */
  timeLeftMs?(): number;
}

/** Nothing to change, the bounds to send, or wait: the desired size is above the new max (boa lowers it). */
export type ScalingPlan =
  | { action: 'none' }
  | { action: 'update'; scalingConfig: ScalingBounds }
  | { action: 'wait'; desiredSize: number };

export function planScalingUpdate(
  current: ScalingBounds,
  wanted: { minSize: number; maxSize: number },
): ScalingPlan;

export function desiredAboveMaxMessage(target: Target, desiredSize: number, waitedMs: number): string;

export function applyBounds(
  eks: EksLike,
  target: Target,
  options: RetryOptions,
): Promise<{ updated: boolean; updateId?: string; scalingConfig?: ScalingBounds }>;

export function readTarget(properties: Record<string, string | undefined>): Target;

export function handler(
  event: {
    RequestType: 'Create' | 'Update' | 'Delete';
    PhysicalResourceId?: string;
    ResourceProperties: Record<string, string | undefined>;
  },
  context?: { getRemainingTimeInMillis(): number },
): Promise<{ PhysicalResourceId?: string; Data?: Record<string, string> }>;
