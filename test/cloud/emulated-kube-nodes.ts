import {
  type ClusterNode,
  type ClusterNodes,
  clusterNodeFrom,
  type NodeObject,
} from '../../src/cloud/aws/cluster-nodes.ts';
import type { Clock } from '../../src/service/ports.ts';
import type { EmulatedInstance } from './emulated-asg.ts';

export interface KubeTimings {
  /** EC2 keeps an instance pending this long after launch. */
  readonly bootMs: number;
  /** kubelet registers the Node this long after EC2 running. */
  readonly registerMs: number;
  /** Ready=True with nvidia.com/gpu advertised this long after registering. */
  readonly readyMs: number;
  /** nvidia.com/gpu a Ready node advertises: one count for all, or each instance's. */
  readonly gpus: number | ((instance: EmulatedInstance) => number);
  readonly instances: () => readonly EmulatedInstance[];
  readonly ec2State: (instance: EmulatedInstance) => string;
}

/**
 * The Kubernetes Nodes of the emulated node group's instances, as the API server would list them: a Node
 * appears `registerMs` after its instance is EC2 running, is Ready with its GPUs `readyMs` later, and goes
 * when the instance is terminated. Instances can be made to never join, or to join but never be Ready.
 */
export class EmulatedKubeNodes implements ClusterNodes {
  private readonly cordoned = new Set<string>();
  private readonly neverJoin = new Set<string>();
  private readonly neverReady = new Set<string>();
  private readonly updateTainted = new Set<string>();
  private readonly names = new Map<string, string>();
  /** Every cordon call, in order. */
  readonly cordons: string[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly t: KubeTimings,
  ) {}

  /** The Node objects (V1Node shape), e.g. to serve from a fake API server. */
  objects(): NodeObject[] {
    const now = this.clock.now();
    return this.t.instances().flatMap((i) => {
      // One the ASG is terminating stays, cordoned by EKS's drain, while the lifecycle hook holds it.
      const draining = i.terminatedAt !== undefined && i.hookUntil !== undefined && now < i.hookUntil;
      if (
        this.neverJoin.has(i.id) ||
        this.t.ec2State(i) !== 'running' ||
        (i.terminatedAt !== undefined && !draining)
      )
        return [];
      const runningAt = i.launchedAt + this.t.bootMs;
      if (now < runningAt + this.t.registerMs) return [];
      const ready = !this.neverReady.has(i.id) && now >= runningAt + this.t.registerMs + this.t.readyMs;
      const name = this.nameOf(i.id);
      return [
        {
          metadata: { name },
          spec: {
            providerID: `aws:///${i.zone}/${i.id}`,
            unschedulable: this.cordoned.has(name) || draining,
            ...(this.updateTainted.has(i.id)
              ? {
                  taints: [
                    { key: 'eks.amazonaws.com/nodegroup', value: 'unschedulable', effect: 'NoSchedule' },
                  ],
                }
              : {}),
          },
          status: {
            conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
            allocatable: ready
              ? { 'nvidia.com/gpu': String(typeof this.t.gpus === 'number' ? this.t.gpus : this.t.gpus(i)) }
              : ({} as Record<string, string>),
          },
        },
      ];
    });
  }

  async list(): Promise<ClusterNode[]> {
    return this.objects().flatMap((o) => clusterNodeFrom(o) ?? []);
  }

  async uncordon(name: string): Promise<void> {
    this.cordoned.delete(name);
  }

  async cordon(name: string): Promise<void> {
    this.cordons.push(name);
    this.cordoned.add(name);
  }

  nameOf(instanceId: string): string {
    let name = this.names.get(instanceId);
    if (!name) {
      name = `ip-10-0-${this.names.size + 1}-${instanceId.slice(-3)}.ec2.internal`;
      this.names.set(instanceId, name);
    }
    return name;
  }

  /** The instance never registers with the cluster (bad bootstrap, wrong security group). */
  neverJoins(instanceId: string): void {
    this.neverJoin.add(instanceId);
  }

  /** The bootstrap fixed: every instance running registers from now on. */
  allJoin(): void {
    this.neverJoin.clear();
  }

  /** The node registers but never becomes Ready (the device plugin or the driver fails). */
  neverReadies(instanceId: string): void {
    this.neverReady.add(instanceId);
  }

  /** EKS taints the node for a node group update: it will be drained and replaced. */
  taintForUpdate(instanceId: string): void {
    this.updateTainted.add(instanceId);
  }

  /** A node made not Ready (neverReadies) is Ready again: its kubelet's heartbeats are back. */
  readiesAgain(instanceId: string): void {
    this.neverReady.delete(instanceId);
  }
}
