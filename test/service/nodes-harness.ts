import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sleep } from '../../src/cloud/time.ts';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import type { Executor, MetricDatum, MetricsSink, NodePool, Workload } from '../../src/service/ports.ts';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { captureLogs } from '../cloud/fake-time.ts';
import { kubeBridge } from '../cloud/kube-bridge.ts';
import type { EmulatedInstance } from '../cloud/emulated-asg.ts';
import { type EmulatedNodegroup, emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { poolOnEmulatedGroup } from './aws-pool.ts';
import { ManualClock } from './harness.ts';

export const TICK_SECONDS = 60;
/** The emulated group's EC2 pending time: a node is billed from its launch plus this. */
export const BOOT_MS = 60_000;

export interface NodesWorldOptions {
  /** The service's idleFill (on by default): off where a test holds jobs to their widths on a node. */
  readonly idleFill?: boolean;
  readonly maxSize?: number;
  /** Kubernetes: Node registered / Ready this long after EC2 running. */
  readonly registerMs?: number;
  readonly kubeReadyMs?: number;
  readonly provisionSeconds?: number;
  readonly notReadyGraceSeconds?: number;
  /** A data dir on disk (restarts); default in memory. */
  readonly onDisk?: boolean;
  /** The node pool's waits (polls, retries): default real ones, which the manual clock never sees. */
  readonly sleep?: Sleep;
  readonly clock?: ManualClock;
  /** The zones of the group's subnets (default three). */
  readonly zones?: readonly string[];
  /** Where each tick's metrics go besides `metrics` (e.g. the CloudWatch sink over a mocked client). */
  readonly sink?: MetricsSink;
  /** DescribeNodegroup's desiredSize lags the ASG's own changes this long (emulated-nodegroup.ts). */
  readonly eksDesiredLagMs?: number;
  /** Running instances the group has at the start, launched an hour earlier (default 0). */
  readonly desiredSize?: number;
  /** The group's EC2 instance type (default g4dn.12xlarge, as boa's). */
  readonly instanceType?: string;
  /** boa's BOA_INSTANCE_TYPE (default g4dn.12xlarge); its gpusPerNode follows it. */
  readonly configuredType?: string;
  /** DescribeNodegroup names no instance types (emulated-nodegroup.ts typeInLaunchTemplate). */
  readonly typeInLaunchTemplate?: boolean;
}

/**
 * boa over the real EKS/EC2/Auto Scaling adapters, their SDK clients mocked as an EKS managed node group
 * (test/cloud/emulated-nodegroup.ts) with Kubernetes Nodes that join after EC2 running. `start()` boots a
 * service over the same group and data dir again: a restart after kill -9 (only SQLite survives).
 */
export function nodesWorld(options: NodesWorldOptions = {}) {
  const clock = options.clock ?? new ManualClock();
  const group = emulateNodegroup({
    clock,
    minSize: 0,
    maxSize: options.maxSize ?? 4,
    bootMs: BOOT_MS,
    updatePolls: 0,
    registerMs: options.registerMs ?? 0,
    kubeReadyMs: options.kubeReadyMs ?? 0,
    ...(options.zones ? { zones: options.zones } : {}),
    ...(options.eksDesiredLagMs ? { eksDesiredLagMs: options.eksDesiredLagMs } : {}),
    ...(options.instanceType ? { instanceType: options.instanceType } : {}),
    ...(options.desiredSize ? { desiredSize: options.desiredSize } : {}),
    ...(options.typeInLaunchTemplate ? { typeInLaunchTemplate: true } : {}),
  });
  const dataDir = options.onDisk ? mkdtempSync(join(tmpdir(), 'boa-nodes-')) : ':memory:';
  const logs = captureLogs();
  const metrics: MetricDatum[][] = [];
  let config = resolveConfig({
    cloud: 'aws',
    dataDir,
    token: 'operator-token-0123456789',
    ...(options.configuredType ? { instanceType: options.configuredType } : { gpusPerNode: 4 }),
    tickSeconds: TICK_SECONDS,
    // The jobs here launch themselves and never report: keep them from being declared lost.
    leaseSeconds: 86_400,
    ...(options.idleFill !== undefined ? { idleFill: options.idleFill } : {}),
    aws: { clusterName: 'boa', nodegroupName: 'gpu', region: 'us-east-1' },
    nodes: {
      provisionSeconds: options.provisionSeconds ?? 900,
      capacityBackoffSeconds: 120,
      ...(options.notReadyGraceSeconds !== undefined
        ? { notReadyGraceSeconds: options.notReadyGraceSeconds }
        : {}),
    },
  });
  const services: Array<{ close: () => Promise<void> }> = [];
  // Kubernetes through the real client against the shared fake API server, fed from the emulator.
  const kube = kubeBridge(group.kube);
  const watchers: KubeClusterNodes[] = [];

  const start = async (wrap: (pool: NodePool) => NodePool = (p) => p, executor: Executor | null = null) => {
    const bridge = await kube;
    // Relisted on every read (resync 0), so each tick sees the fake as the bridge just left it.
    const nodes = new KubeClusterNodes(bridge.fake.kubeConfig(), { logger: logs.logger, clock, resyncMs: 0 });
    watchers.push(nodes);
    const pool = poolOnEmulatedGroup(config, logs.logger, group, clock, nodes, options.sleep);
    const boa = await bootService(config, {
      clock,
      pool: wrap(pool),
      metrics: {
        put: async (batch, at) => {
          metrics.push([...batch]);
          await options.sink?.put(batch, at);
        },
      },
      computer: new InlinePlanComputer(),
      logger: logs.logger,
      dataDir,
      executor,
    });
    services.push(boa);
    const tick = async (count = 1) => {
      for (let i = 0; i < count; i++) {
        bridge.sync();
        await boa.scheduler.tick();
        await boa.scheduler.settle();
        clock.advance(TICK_SECONDS);
      }
    };
    /** A job that wants `gpus` GPUs throughout (its widths set as a plan would). */
    const job = (gpus: number, workload?: Workload) => {
      const { job } = boa.service.registerJob('cifar10', `job-${gpus}`, workload);
      job.widths = Array.from({ length: 8 }, () => gpus);
      return job;
    };
    const status = async () => {
      const res = await boa.app.request('/v1/status', { headers: { authorization: `Bearer ${boa.token}` } });
      return (await res.json()) as any;
    };
    // sync: the fake API server takes in the emulator's Nodes (tick does it; for ticks run by hand).
    return { boa, tick, job, status, sync: bridge.sync, cordons: bridge.cordons, kube: bridge.fake };
  };

  const cleanup = async () => {
    for (const s of services.splice(0)) await s.close().catch(() => undefined);
    for (const w of watchers.splice(0)) await w.close();
    await (await kube).close();
    if (dataDir !== ':memory:') rmSync(dataDir, { recursive: true, force: true });
  };

  /**
   * The node group the next start() is configured with (CloudFormation points boa at a new one), and
   * its type's GPUs per node when the type changed with it.
   */
  const configureNodegroup = (nodegroupName: string, gpusPerNode?: number) => {
    config = {
      ...config,
      aws: { ...config.aws!, nodegroupName },
      ...(gpusPerNode !== undefined ? { gpusPerNode } : {}),
    };
  };
  /** The BOA_INSTANCE_TYPE the next start() is configured with (of the same GPUs per node). */
  const configureInstanceType = (instanceType: string) => {
    config = { ...config, instanceType };
  };

  return { clock, group, logs, metrics, start, cleanup, dataDir, configureNodegroup, configureInstanceType };
}

export type NodesWorld = ReturnType<typeof nodesWorld>;

/** Kubernetes node name of an instance of the emulated group. */
export function nodeName(group: EmulatedNodegroup, instanceId: string): string {
  return group.kube.nameOf(instanceId);
}

/**
 * EC2's bill in GPU-ms for [from, to] of the instances given, each of `gpus` GPUs: from its launch plus
 * the pending time, to its end (or its lifecycle hook's, which AWS bills too).
 */
export function billedGpuMs(
  instances: readonly EmulatedInstance[],
  from: number,
  to: number,
  gpus: number,
): number {
  let ms = 0;
  for (const i of instances) {
    const stopped = i.terminatedAt === undefined ? to : (i.hookUntil ?? i.terminatedAt);
    ms += Math.max(0, Math.min(stopped, to) - Math.max(i.launchedAt + BOOT_MS, from));
  }
  return ms * gpus;
}
