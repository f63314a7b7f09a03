/**
 * `--cloud aws --executor kubernetes` through bootService as main runs it: the executor is the one boot
 * loads (dynamic import, cluster from KUBECONFIG), the node group is the real EKS adapter over mocked SDK
 * clients (aws-sdk-client-mock), and Kubernetes is the real @kubernetes/client-node against the
 * in-process fake API server, whose Nodes follow the emulated group's instances.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { LABELS, networkPolicyName, podName, serviceName } from '../../src/cloud/kubernetes/names.ts';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { nodesOf } from '../../src/service/jobs.ts';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { kubeBridge } from '../cloud/kube-bridge.ts';
import { poolOnEmulatedGroup } from './aws-pool.ts';
import { ManualClock } from './harness.ts';
import { useKubeconfig } from '../helpers/kubeconfig-env.ts';

const NS = 'boa-jobs';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Watch events and the executor's pass arrive asynchronously: poll, with room for a loaded machine. */
async function eventually<T>(
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

/** The cluster a service runs against: an emulated node group whose instances join the fake API server. */
async function eksCluster() {
  const clock = new ManualClock();
  const group = emulateNodegroup({ clock, minSize: 0, maxSize: 4, bootMs: 60_000, updatePolls: 0 });
  const bridge = await kubeBridge(group.kube);
  cleanups.push(() => bridge.close());
  useKubeconfig(bridge.fake.kubeConfig().exportConfig(), cleanups);
  return { clock, group, bridge };
}

/** A service on its own fresh database (`:memory:`), against `cluster` (a new one by default). */
async function bootOnEks(cluster?: Awaited<ReturnType<typeof eksCluster>>, kubernetes: object = {}) {
  const { clock, group, bridge } = cluster ?? (await eksCluster());
  const logger = pino({ level: 'silent' });
  const config = resolveConfig({
    cloud: 'aws',
    executor: 'kubernetes',
    dataDir: ':memory:',
    token: 'operator-token-0123456789',
    publicUrl: 'http://boa.boa-system.svc:8080',
    gpusPerNode: 4,
    priorRates: { cifar10: 8 },
    terminationGraceSeconds: 30,
    aws: { clusterName: 'boa', nodegroupName: 'gpu', region: 'us-east-1' },
    kubernetes: { namespace: NS, ...kubernetes },
  });
  const nodes = new KubeClusterNodes(bridge.fake.kubeConfig(), { logger, clock, resyncMs: 0 });
  cleanups.push(() => nodes.close());
  const pool = poolOnEmulatedGroup(config, logger, group, clock, nodes);
  // No executor given: boot makes it from the config, as `boa-service --executor kubernetes` does.
  const boa = await bootService(config, { clock, pool, computer: new InlinePlanComputer(), logger });
  cleanups.push(() => boa.close());
  const tick = async () => {
    bridge.sync();
    await boa.scheduler.tick();
    await boa.scheduler.settle();
    await boa.service.execution.settle();
    clock.advance(60);
  };
  const api = (method: string, path: string, body?: unknown) =>
    boa.app.request(path, {
      method,
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  expect((await api('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await boa.service.planner.idle();
  /** Ticks until the job is placed: the group scales up, the instances boot and join as Nodes. */
  const placedJob = (id: number) =>
    eventually(
      'the job placed',
      async () => {
        await tick();
        return boa.service.job(id);
      },
      (job) => job.allocation.length > 0,
    );
  return { boa, fake: bridge.fake, tick, group, api, placedJob, cluster: { clock, group, bridge } };
}

describe('service with --cloud aws --executor kubernetes', () => {
  it('runs a submitted workload as pods pinned to its nodes, and removes them once it is done', async () => {
    const { boa, fake, tick, api, placedJob } = await bootOnEks();
    expect(boa.service.execution.executor?.kind).toBe('kubernetes');
    const submitted = await api('POST', '/v1/jobs', {
      class: 'cifar10',
      name: 'r18',
      workload: {
        image: 'ghcr.io/example/train:1',
        command: ['python', 'train.py'],
        args: ['--epochs', '90'],
      },
    });
    expect(submitted.status).toBe(201);
    const { id } = (await submitted.json()) as { id: number };

    // The group scales up, the instances boot and join as Nodes, the job is placed, its pods made.
    const placed = await placedJob(id);
    const perNode = nodesOf(placed.allocation);
    const pods = await eventually(
      'the job pods',
      () => fake.pods(NS),
      (list) => list.length === perNode.length,
    );
    const nodeNames = new Set(fake.nodes().map((n) => n.metadata.name));
    const [jobService] = fake.services(NS);
    expect(jobService?.metadata.name).toBe(serviceName(id));
    for (const [rank, { node, gpus }] of perNode.entries()) {
      const pod = pods.find((p) => p.metadata.name === podName(id, placed.generation, rank));
      expect(pod, `pod of rank ${rank}`).toBeDefined();
      // Pinned to the Kubernetes Node boa placed it on (a real Node of the group), with its GPUs.
      expect(nodeNames.has(node)).toBe(true);
      expect(pod?.spec?.nodeName).toBe(node);
      const container = pod?.spec?.containers?.[0];
      expect(container?.resources?.limits?.['nvidia.com/gpu']).toBe(String(gpus));
      expect(container?.image).toBe('ghcr.io/example/train:1');
      expect(pod?.metadata.labels).toMatchObject({
        [LABELS.jobId]: String(id),
        [LABELS.generation]: String(placed.generation),
        [LABELS.rank]: String(rank),
      });
      // Owned by the job's headless Service, so deleting it takes the pods along.
      expect(pod?.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'Service',
        name: serviceName(id),
        uid: jobService?.metadata.uid,
      });
      const env = Object.fromEntries(
        (container?.env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value]),
      );
      expect(env).toMatchObject({
        BOA_URL: 'http://boa.boa-system.svc:8080',
        BOA_JOB_ID: String(id),
        WORLD_SIZE: String(placed.allocation.length),
        NODE_RANK: String(rank),
        NPROC_PER_NODE: String(gpus),
      });
    }

    // While it runs, the job has its NetworkPolicy: only its own pods may connect to them.
    const [policy, ...otherPolicies] = fake.networkPolicies(NS);
    expect(otherPolicies).toEqual([]);
    expect(policy?.metadata.name).toBe(networkPolicyName(id, jobService!.metadata.uid));
    expect(policy?.spec.podSelector.matchLabels[LABELS.jobId]).toBe(String(id));
    expect(policy?.spec.ingress).toEqual([{ from: [{ podSelector: policy?.spec.podSelector }] }]);

    // The job's token reaches its containers from its Secret, never as a value in the pod spec, and
    // boa takes it as the job's own.
    fake.kubelet.startPods();
    for (const pod of pods) {
      expect(JSON.stringify(pod.spec)).not.toMatch(/"name":"BOA_JOB_TOKEN","value"/);
      const token = fake.kubelet.environment(pod.metadata.name)?.BOA_JOB_TOKEN;
      expect(token).toBeTruthy();
      const asJob = await boa.app.request(`/v1/jobs/${id}/allocation`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(asJob.status).toBe(200);
    }

    // Rank 0 exits 0: the job is done and its pods, Service and NetworkPolicy go.
    fake.kubelet.exit(podName(id, placed.generation, 0), 0);
    await eventually(
      'the job done',
      async () => {
        await tick();
        return boa.service.job(id).state;
      },
      (state) => state === 'done',
    );
    await eventually(
      'the pods gone',
      async () => {
        await tick();
        fake.kubelet.finishTermination();
        return fake.pods(NS).map((p) => p.metadata.name);
      },
      (names) => names.length === 0,
    );
    await eventually(
      'the job Service gone',
      () => fake.services(NS),
      (list) => list.length === 0,
    );
    // Collected with the Service.
    expect(fake.networkPolicies(NS)).toEqual([]);
  }, 120_000);

  it('a container whose command exits 127 fails its job at once, not restarted, naming the image to check', async () => {
    const { boa, fake, tick, api, placedJob } = await bootOnEks();
    const submitted = await api('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { image: 'ghcr.io/example/train:1', command: ['sh', '-c', 'exec torchrun train.py'] },
    });
    const { id } = (await submitted.json()) as { id: number };
    const placed = await placedJob(id);
    await eventually(
      'its pods',
      () => fake.pods(NS),
      (list) => list.length === nodesOf(placed.allocation).length,
    );
    fake.kubelet.startPods();
    await tick();
    // Its generation now: placed is the service's own object, which the job's end changes.
    const generation = placed.generation;
    // The image has no torchrun: the shell says so and exits 127 (maxRestarts is 3 by default).
    fake.kubelet.exit(podName(id, generation, 0), 127);
    const job = await eventually(
      'the job failed',
      async () => {
        await tick();
        return boa.service.job(id);
      },
      (j) => j.state !== 'running' || j.restarts > 0,
    );
    expect(job).toMatchObject({ state: 'failed', restarts: 0, exitCode: 127 });
    expect(job.failureReason).toMatch(
      /^rank 0 Error; not restarted: exit 127 means a command the job ran was not found, .* check the command and the PATH in the image ghcr\.io\/example\/train:1 /,
    );
    // No second generation was made.
    expect(fake.pods(NS).every((p) => p.metadata.labels?.[LABELS.generation] === String(generation))).toBe(
      true,
    );
  }, 120_000);

  it('a node whose kubelet dies under a job is removed after provisionSeconds, though its old pod can never confirm its stop, and the job runs elsewhere', async () => {
    const { boa, fake, tick, group, placedJob, api } = await bootOnEks();
    const submitted = await api('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { image: 'ghcr.io/example/train:1', command: ['python', 'train.py'] },
    });
    const { id } = (await submitted.json()) as { id: number };
    const placed = await placedJob(id);
    await eventually(
      'its pods',
      () => fake.pods(NS),
      (list) => list.length === nodesOf(placed.allocation).length,
    );
    fake.kubelet.startPods();
    await tick();
    const deadNode = fake.pods(NS)[0]!.spec.nodeName as string;
    const node = fake.nodes().find((n) => n.metadata.name === deadNode)!;
    const instanceId = (node.spec.providerID as string).split('/').pop()!;
    // Its kubelet goes silent: NotReady, and a pod deleted there stays Terminating (the fake kubelet
    // confirms no stop on a NotReady node, as a real API server waits for the kubelet).
    group.kube.neverReadies(instanceId);
    let ticks = 0;
    const removed = await eventually(
      'the dead node removed',
      async () => {
        await tick();
        ticks += 1;
        fake.kubelet.startPods();
        fake.kubelet.finishTermination();
        return group.asg.instances.find((i: { id: string }) => i.id === instanceId) as
          { terminatedAt?: number } | undefined;
      },
      (instance) => instance?.terminatedAt !== undefined || ticks > 60,
    );
    expect(removed?.terminatedAt).toBeDefined();
    // provisionSeconds (900 s) after it was last seen ready, at 60 s ticks, plus the cordon's pass.
    expect(ticks).toBeGreaterThanOrEqual(15);
    expect(ticks).toBeLessThanOrEqual(20);
    // The job runs on other nodes, its pods all of its current generation, none Terminating.
    // The Ready nodes' kubelets go on confirming stops: on a loaded machine the job can still be moving
    // (its generation after the node's loss giving way to a wider one) once the node is gone (found in
    // CI: without the confirmations that generation's pods stayed Terminating until the job failed).
    const job = await eventually(
      'the job running elsewhere',
      async () => {
        await tick();
        fake.kubelet.startPods();
        fake.kubelet.finishTermination();
        return { job: boa.service.job(id), pods: fake.pods(NS) };
      },
      ({ job, pods }) =>
        pods.length === nodesOf(job.allocation).length &&
        pods.every((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp),
    );
    expect(job.job.state, job.job.failureReason ?? undefined).toBe('running');
    // No restart counted: the start deadline waits while the older generation's pod stops.
    expect(job.job.restarts).toBe(0);
    expect(nodesOf(job.job.allocation).map((n) => n.node)).not.toContain(deadNode);
    for (const pod of job.pods) {
      expect(pod.spec.nodeName).not.toBe(deadNode);
      expect(pod.metadata.labels?.[LABELS.generation]).toBe(String(job.job.generation));
    }
  }, 120_000);

  it("a database started afresh (--init) gives new jobs ids above the pods an old one left, never an old job's pods", async () => {
    // Kept for their logs the whole test (the fake kubelet stamps exits by the test's clock, weeks
    // behind the wall clock the executor reads).
    const kept = { endedPodRetentionSeconds: 1e9 };
    const first = await bootOnEks(undefined, kept);
    const submit = async (api: typeof first.api) => {
      const made = await api('POST', '/v1/jobs', {
        class: 'cifar10',
        workload: { image: 'ghcr.io/example/train:1', command: ['python', 'train.py'] },
      });
      expect(made.status).toBe(201);
      return ((await made.json()) as { id: number }).id;
    };
    const old = await submit(first.api);
    await first.placedJob(old);
    await eventually(
      'its pods',
      () => first.fake.pods(NS),
      (list) => list.length > 0,
    );
    first.fake.kubelet.startPods();
    await first.tick();
    const { generation } = first.boa.service.job(old);
    const oldPod = podName(old, generation, 0);
    first.fake.kubelet.exit(oldPod, 0);
    await eventually(
      'the old job done',
      async () => {
        await first.tick();
        first.fake.kubelet.finishTermination();
        return first.boa.service.job(old).state;
      },
      (state) => state === 'done',
    );
    expect(first.fake.pods(NS).map((p) => p.metadata.name)).toContain(oldPod);
    await first.boa.close();

    // The same cluster, a new database: the executor's first answer shows the old job's pod.
    const second = await bootOnEks(first.cluster, kept);
    await second.tick();
    const fresh = await submit(second.api);
    expect(fresh).toBeGreaterThan(old);
    // It runs as itself, on pods of its own.
    const running = await second.placedJob(fresh);
    await eventually(
      'its own pods',
      () => second.fake.pods(NS).filter((p) => p.metadata.labels?.[LABELS.jobId] === String(fresh)),
      (list) => list.length === nodesOf(running.allocation).length,
    );
    second.fake.kubelet.startPods();
    await second.tick();
    expect(second.boa.service.job(fresh).state).toBe('running');
  }, 120_000);
});
