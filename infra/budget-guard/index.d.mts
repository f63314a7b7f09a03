// Types for index.mjs (the Lambda ships as plain JavaScript so synth needs no bundler).
import type { CloudWatch } from '@aws-sdk/client-cloudwatch';
import type { EKS } from '@aws-sdk/client-eks';

export interface GuardSettings {
  clusterName: string;
  nodegroupName: string;
  gpusPerNode: number;
  guardMinutes: number;
  budget?: number;
}

export interface GuardDecision {
  action: 'none' | 'shrink';
  /** boa published no heartbeat within guardMinutes. */
  silent: boolean;
  desiredSize?: number;
  reason: string;
}

export function allowedNodes(budget: number, gpusPerNode: number, minSize?: number): number;
export function decide(input: {
  heartbeats: number;
  budget: number | undefined;
  gpusPerNode: number;
  scaling: { minSize?: number; maxSize?: number; desiredSize?: number };
}): GuardDecision;
export function readSettings(env: Record<string, string | undefined>): GuardSettings;
export function runGuard(
  clients: { eks: EKS; cloudwatch: CloudWatch },
  settings: GuardSettings,
  now?: Date,
): Promise<GuardDecision & { heartbeats: number; budget: number | undefined }>;
export function handler(): Promise<unknown>;
