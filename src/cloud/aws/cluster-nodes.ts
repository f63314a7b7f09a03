/**
 * Kubernetes' view of the node group's instances: a node is usable for jobs only when it is registered,
 * Ready=True, not cordoned and advertises its GPUs (the NVIDIA device plugin runs), which happens minutes
 * after EC2 reports the instance running. Joined to EC2 instances by spec.providerID.
 */
export interface ClusterNode {
  /** The Kubernetes node name: what allocations and pods name. */
  readonly name: string;
  /** The EC2 instance behind it, from spec.providerID (aws:///ZONE/i-...). */
  readonly instanceId: string | undefined;
  /** Condition Ready is True. */
  readonly ready: boolean;
  /** Cordoned (spec.unschedulable). */
  readonly unschedulable: boolean;
  /** Tainted by EKS for a node group update (UPDATE_TAINT_KEY): it will be drained and replaced. */
  readonly updating?: boolean;
  /** Allocatable nvidia.com/gpu (0 until the device plugin advertises them). */
  readonly gpus: number;
}

import type { ForeignGpus } from './foreign-gpu-pods.ts';

export interface ClusterNodes {
  /** The nodes as last seen (a watch keeps them current; a periodic relist corrects missed events). */
  list(): Promise<readonly ClusterNode[]>;
  /** Marks the node unschedulable, so nothing new lands there while boa empties and removes it. */
  cordon(name: string): Promise<void>;
  /** Marks it schedulable again: boa called its removal off. */
  uncordon(name: string): Promise<void>;
  close?(): Promise<void>;
  /** GPUs held on these nodes by pods boa did not create; nodes with none are left out. */
  foreignGpus?(names: readonly string[]): Promise<ReadonlyMap<string, ForeignGpus>>;
}

/** `aws:///us-east-1a/i-0abc...` -> `i-0abc...`; anything else -> undefined. */
export function instanceIdFromProviderId(providerId: string | undefined): string | undefined {
  const match = /^aws:\/\/\/[^/]*\/(i-[0-9a-z]+)$/.exec(providerId ?? '');
  return match?.[1];
}

/** The parts of a V1Node boa reads (structurally typed so tests can build one by hand). */
export interface NodeObject {
  readonly metadata?: { readonly name?: string };
  readonly spec?: {
    readonly providerID?: string;
    readonly unschedulable?: boolean;
    readonly taints?: ReadonlyArray<{ readonly key: string; readonly effect: string }>;
  };
  readonly status?: {
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }>;
    readonly allocatable?: Readonly<Record<string, string>>;
  };
}

/**
 * A managed node group update (Kubernetes version, AMI release, launch template) taints every node it
 * will replace with eks.amazonaws.com/nodegroup=unschedulable:NoSchedule, then drains and terminates
 * them a few at a time (maxUnavailable). boa's pods are bound by nodeName and skip that check, so boa
 * places nothing new there (a pod put there is evicted by the drain); the jobs there keep running until
 * the drain reaches their node, rather than all restarting at once onto the few surge nodes.
 */
export const UPDATE_TAINT_KEY = 'eks.amazonaws.com/nodegroup';

export function clusterNodeFrom(node: NodeObject): ClusterNode | undefined {
  const name = node.metadata?.name;
  if (!name) return undefined;
  const gpus = Number.parseInt(node.status?.allocatable?.['nvidia.com/gpu'] ?? '0', 10);
  return {
    name,
    instanceId: instanceIdFromProviderId(node.spec?.providerID),
    ready: (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    unschedulable: node.spec?.unschedulable === true,
    updating: (node.spec?.taints ?? []).some(
      (t) => t.key === UPDATE_TAINT_KEY && t.effect !== 'PreferNoSchedule',
    ),
    gpus: Number.isFinite(gpus) ? gpus : 0,
  };
}
