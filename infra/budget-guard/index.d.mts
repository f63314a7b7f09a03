// Types for index.mjs (the Lambda ships as plain JavaScript so synth needs no bundler).
import type { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EKSClient } from '@aws-sdk/client-eks';

export interface GuardSettings {
  clusterName: string;
  nodegroupName: string;
  gpusPerNode: number;
  guardMinutes: number;
  budget?: number;
  /** GPUs per instance type boa knows (INSTANCE_TYPE_GPUS): each group's nodes counted at their type's. */
  instanceGpus?: Record<string, number>;
}

export interface GuardDecision {
  action: 'none' | 'shrink';
  /** boa published no heartbeat within guardMinutes. */
  silent: boolean;
  desiredSize?: number;
  /** Instances whose scale-in protection the guard lifts (boa's, on the nodes it had busy). */
  unprotect?: string[];
  reason: string;
}

export const IN_USE_RETRY: { maxAttempts: number; delayMs: number };
export function allowedNodes(
  budget: number,
  gpusPerNode: number,
  minSize?: number,
  /** GPUs of replaced groups' running instances (paid too): the guarded group gets what is left. */
  replacedGpus?: number,
): number;
/** The GPUs per node the guarded group is held to: the most of its known types', else gpusPerNode. */
export function groupGpusPerNode(
  settings: GuardSettings,
  nodegroupTypes?: readonly string[],
  instanceTypes?: readonly (string | undefined)[],
): number;
export const GPU_LABELS: Record<string, string>;
export const DEPLOYMENT_TAGS: string[];
export function leftoverGroups<
  G extends { nodegroupName?: string; labels?: Record<string, string>; tags?: Record<string, string> },
>(guarded: G, groups: G[]): G[];
export function decide(input: {
  heartbeats: number;
  budget: number | undefined;
  gpusPerNode: number;
  scaling: { minSize?: number; maxSize?: number; desiredSize?: number };
  instances?: { running: number; protectedIds: string[] };
  replacedGpus?: number;
}): GuardDecision;
export function periodFor(from: Date, to: Date): number;
export function readSettings(env: Record<string, string | undefined>): GuardSettings;
export function runGuard(
  clients: { eks: EKSClient; cloudwatch: CloudWatchClient; autoscaling?: AutoScalingClient },
  settings: GuardSettings,
  now?: Date,
  /** Tests: a sleep that does not wait (the waits while another update holds the group). */
  options?: { sleep?: (ms: number) => Promise<unknown> },
): Promise<
  Omit<GuardDecision, 'unprotect'> & {
    heartbeats: number;
    budget: number | undefined;
    unprotected: number;
    /** The desired size sent. */
    sent?: number;
    /** The group was raised to this while the guard waited for it: left alone. */
    raisedMeanwhile?: number;
    /** Another update brought the group within the budget while the guard waited. */
    withinBudget?: number;
    /** Groups a replacement left (boa's labels, the same deployment tags) whose instances it counted. */
    replacedGroups?: string[];
    /** Their instances counted against the budget: all still paid, terminating ones (a drain) included. */
    replacedRunning?: number;
    /** Those instances' GPUs, at their own types' (the guarded group's for a type not known). */
    replacedGpus?: number;
  }
>;
export function handler(): Promise<unknown>;
