/**
 * A boa service restarted over the same data dir and the same cluster (an emulated EKS node group whose
 * instances join the in-process fake Kubernetes API server), as kubernetes-boot.test.ts boots it: the
 * first life is left at a chosen point, then a second boots with only what SQLite and the cluster held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { expect } from 'vitest';
import { LABELS } from '../../src/cloud/kubernetes/names.ts';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { nodesOf } from '../../src/service/jobs.ts';
import type { NodePool } from '../../src/service/ports.ts';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { kubeBridge } from '../cloud/kube-bridge.ts';
import type { FakeKubeApiOptions } from '../fakes/kube-api/index.ts';
import { poolOnEmulatedGroup } from './aws-pool.ts';
import { ManualClock } from './harness.ts';
import { useKubeconfig } from '../helpers/kubeconfig-env.ts';

export const NS = 'boa-jobs';

/** Watch events and the executor's pass arrive asynchronously: poll, with room for a loaded machine. */
export async function eventually<T>(
  what: string,
  read: () => T | Promise<T>,
  ok: (value: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The pool of a service killed once a `key` call has run: that call did its work in AWS, then the process
 * died: its database takes no more writes (the connection closed, so no handler records a failure), and
 * every pool call after it fails before reaching AWS.
 */
export function killedAfter<K extends keyof NodePool>(key: K): Wrap {
  return (pool, die) => {
    let killed = false;
    return new Proxy(pool, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (killed) throw new Error('kill -9: the service is dead');
          const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
          if (name !== key) return result;
          killed = true;
          die();
          throw new Error(`kill -9 after ${String(key)}, before its answer was recorded`);
        };
      },
    });
  };
}

/** Wraps a life's pool; `die` stops that life's database taking writes. */
export type Wrap = (pool: NodePool, die: () => void) => NodePool;

/**
 * The cluster and data dir both lives share; `close` removes them and restores KUBECONFIG. `fakeOptions`:
 * the fake API server's (test/fakes/kube-api/index.ts).
 */
export async function crashWorld(fakeOptions: FakeKubeApiOptions = {}) {
  const cleanups: Array<() => Promise<void> | void> = [];
  // From the wall clock, which the fake kubelet stamps exits by: an exit while boa is down is then
  // before the restart on boa's clock too (the manual clock runs ahead of it, a minute a tick).
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
  const group = emulateNodegroup({ clock, minSize: 0, maxSize: 4, bootMs: 60_000, updatePolls: 0 });
  const bridge = await kubeBridge(group.kube, 4, fakeOptions);
  cleanups.push(() => bridge.close());
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-kcrash-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  useKubeconfig(bridge.fake.kubeConfig().exportConfig(), cleanups);
  const fake = bridge.fake;

  /** Every life's log lines, parsed. */
  const logs: Array<Record<string, unknown>> = [];
  const sink = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  /** One life of the service on the shared data dir. */
  const boot = async (wrap: Wrap = (pool) => pool) => {
    const logger = pino({ level: 'debug' }, sink);
    const config = resolveConfig({
      cloud: 'aws',
      executor: 'kubernetes',
      dataDir,
      token: 'operator-token-0123456789',
      publicUrl: 'http://boa.boa-system.svc:8080',
      gpusPerNode: 4,
      priorRates: { cifar10: 8 },
      terminationGraceSeconds: 30,
      aws: { clusterName: 'boa', nodegroupName: 'gpu', region: 'us-east-1' },
      kubernetes: { namespace: NS },
    });
    const nodes = new KubeClusterNodes(fake.kubeConfig(), { logger, clock, resyncMs: 0 });
    cleanups.push(() => nodes.close());
    let die = () => {};
    const pool = wrap(poolOnEmulatedGroup(config, logger, group, clock, nodes), () => die());
    const boa = await bootService(config, { clock, pool, computer: new InlinePlanComputer(), logger });
    let dead = false;
    die = () => {
      dead = true;
      boa.db.$client.close();
    };
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await boa.close();
    };
    cleanups.push(close);
    const tick = async () => {
      bridge.sync();
      try {
        await boa.scheduler.tick();
        await boa.scheduler.settle();
        await boa.service.execution.settle();
      } catch (error) {
        // Killed meanwhile (a pass between ticks, after a replica ended): a dead service's tick fails.
        if (!dead) throw error;
      }
      clock.advance(60);
    };
    const api = (method: string, path: string, body?: unknown) =>
      boa.app.request(path, {
        method,
        headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    /** Kills this life: its database takes no more writes. */
    const kill = () => die();
    return { boa, tick, api, close, kill };
  };

  /** A job of class cifar10 running a command; its id. */
  const submit = async (api: Awaited<ReturnType<typeof boot>>['api']) => {
    const made = await api('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { image: 'ghcr.io/example/train:1', command: ['python', 'train.py'] },
    });
    if (made.status !== 201) throw new Error(`submit: ${made.status} ${await made.text()}`);
    return ((await made.json()) as { id: number }).id;
  };

  const close = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  };
  return { clock, group, bridge, fake, dataDir, logs, boot, submit, close };
}

export type CrashWorld = Awaited<ReturnType<typeof crashWorld>>;

/** The job's pods: name, generation, node, phase, Terminating or not. */
export const podsOf = (w: CrashWorld, id: number) =>
  w.fake
    .pods(NS)
    .filter((p) => p.metadata.labels?.[LABELS.jobId] === String(id))
    .map((p) => ({
      name: p.metadata.name as string,
      generation: Number(p.metadata.labels?.[LABELS.generation]),
      node: p.spec.nodeName as string,
      phase: p.status?.phase as string,
      stopping: !!p.metadata.deletionTimestamp,
    }));

/** A first life (budget 30) with one job running on its pods: the life, the job's id, where it was placed. */
export async function runningFirstLife(w: CrashWorld) {
  const first = await w.boot();
  expect((await first.api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await first.boa.service.planner.idle();
  const id = await w.submit(first.api);
  const placed = await eventually(
    'the job placed',
    async () => {
      await first.tick();
      return structuredClone(first.boa.service.job(id));
    },
    (job) => job.allocation.length > 0,
  );
  await eventually(
    'its pods',
    () => podsOf(w, id),
    (pods) => pods.length === nodesOf(placed.allocation).length,
  );
  w.fake.kubelet.startPods();
  await first.tick();
  expect(first.boa.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
  return { first, id, placed };
}
