import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { configSchema } from '../../src/service/config.ts';
import { configFromEnv } from '../../src/service/config-env.ts';
import type { DesiredJob, ReplicaStatus, Workload } from '../../src/service/ports.ts';
import type { FakeKubeApi } from '../fakes/kube-api/index.ts';
import { fakeKubeCluster, podHoldingGpus } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const workload: Workload = { image: 'repo/train:1', command: ['python3', 'train.py'] };

function job(jobId: number, generation: number, nodes: readonly string[]): DesiredJob {
  return {
    jobId,
    generation,
    replicas: nodes.map((node, rank) => ({ jobId, generation, rank, node, gpus: 4, workload, env: {} })),
  };
}

describe('Kubernetes executor over the fake API server', () => {
  const cluster = fakeKubeCluster(NS);
  const { executor, executors } = cluster;
  let fake: FakeKubeApi;
  let nodes: string[];
  let delays: number[];
  beforeEach(() => void ({ fake, nodes, delays } = cluster));
  const podPosts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods'));
  const podNames = () =>
    fake
      .pods(NS)
      .map((p) => p.metadata.name)
      .sort();

  it('creates one pod per node of the placement and the job Service that owns them', async () => {
    await executor().reconcile([job(1, 1, nodes)]);
    expect(podNames()).toEqual(['boa-job-1-g1-r0', 'boa-job-1-g1-r1']);
    const [svc] = fake.services(NS);
    expect(svc?.metadata.name).toBe('boa-job-1');
    for (const pod of fake.pods(NS)) expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(svc?.metadata.uid);
    expect(
      fake
        .pods(NS)
        .map((p) => p.spec.nodeName)
        .sort(),
    ).toEqual([...nodes].sort());
  });

  it("reads a pod's log through the retry layer; a pod whose container has not started has written nothing", async () => {
    fake.kubelet.setNodeReady(nodes[1]!, false);
    const e = executor();
    await e.reconcile([job(5, 1, [nodes[1]!])]);
    expect(fake.pods(NS)[0]?.status?.phase).toBe('Pending');
    expect(await e.logs!({ jobId: 5, rank: 0, tailLines: 10 })).toEqual({ generation: 1, text: '' });
    fake.kubelet.setNodeReady(nodes[1]!, true);
    fake.kubelet.startPods();
    fake.kubelet.writeLog('boa-job-5-g1-r0', 'loss 0.9\nloss 0.7\n');
    fake.faults.inject({ status: 503, count: 1, match: (r) => r.path.endsWith('/log') });
    expect(await e.logs!({ jobId: 5, rank: 0, tailLines: 1 })).toEqual({ generation: 1, text: 'loss 0.7\n' });
    expect(fake.faults.pending()).toBe(0);
    // Without get on pods/log (RBAC), the refusal says what is missing.
    fake.faults.inject({ status: 403, reason: 'Forbidden', count: 1, match: (r) => r.path.endsWith('/log') });
    await expect(e.logs!({ jobId: 5, rank: 0, tailLines: 1 })).rejects.toThrow(/needs get on pods\/log/);
  });

  it('two service instances reconciling at once create each pod once; the loser adopts it', async () => {
    const [a, b] = [executor(), executor()];
    const desired = [job(2, 1, nodes)];
    const [sa, sb] = await Promise.all([a.reconcile(desired), b.reconcile(desired)]);
    expect(podNames()).toEqual(['boa-job-2-g1-r0', 'boa-job-2-g1-r1']);
    expect(podPosts().filter((r) => r.status === 201)).toHaveLength(2);
    expect(sa.map((s) => s.rank).sort()).toEqual([0, 1]);
    expect(sb.map((s) => s.rank).sort()).toEqual([0, 1]);
  });

  it('a restarted executor adopts running pods: no create at all', async () => {
    const first = executor();
    await first.reconcile([job(3, 1, nodes)]);
    await first.close();
    const posts = podPosts().length;
    const statuses = await executor().reconcile([job(3, 1, nodes)]);
    expect(podPosts()).toHaveLength(posts);
    expect(statuses.map((s) => s.phase)).toEqual(['running', 'running']);
  });

  it('retries throttling, server errors and conflicts with backoff, creating the pod once', async () => {
    fake.faults.inject({ status: 429, count: 2, retryAfterSeconds: 1, match: (r) => r.method === 'POST' });
    fake.faults.inject({ status: 500, count: 1, match: (r) => r.method === 'GET' && !r.watch });
    fake.faults.inject({ status: 409, reason: 'Conflict', count: 1, match: (r) => r.method === 'POST' });
    await executor().reconcile([job(4, 1, nodes.slice(0, 1))]);
    expect(podNames()).toEqual(['boa-job-4-g1-r0']);
    expect(fake.faults.pending()).toBe(0);
    expect(podPosts().filter((r) => r.status === 201)).toHaveLength(1);
    // 429 honours Retry-After (1 s) over the shorter backoff.
    expect(delays.filter((d) => d === 1000).length).toBeGreaterThanOrEqual(2);
  });

  it('gives up on a request that hangs after its timeout, and retries it', async () => {
    fake.faults.inject({
      timeout: true,
      count: 1,
      match: (r) => r.method === 'POST' && r.path.endsWith('/pods'),
    });
    await executor({ requestTimeoutMs: 300 }).reconcile([job(5, 1, nodes.slice(0, 1))]);
    expect(podNames()).toEqual(['boa-job-5-g1-r0']);
    expect(delays).toHaveLength(1);
  });

  it('bounded: persistent throttling fails the step after 4 attempts, logged, and the next tick succeeds', async () => {
    fake.faults.inject({
      status: 429,
      count: 4,
      match: (r) => r.method === 'POST' && r.path.endsWith('/pods'),
    });
    const e = executor();
    await e.reconcile([job(6, 1, nodes.slice(0, 1))]);
    expect(podNames()).toEqual([]);
    expect(podPosts()).toHaveLength(4);
    await e.reconcile([job(6, 1, nodes.slice(0, 1))]);
    expect(podNames()).toEqual(['boa-job-6-g1-r0']);
  });

  it('relists after the watch expires (410) and sees what changed meanwhile', async () => {
    const e = executor();
    await e.reconcile([job(7, 1, nodes.slice(0, 1))]);
    const lists = () =>
      fake.requests.filter((r) => r.method === 'GET' && !r.watch && r.path.endsWith('/pods')).length;
    const listed = lists();
    // The watch drops; a pod goes while nobody watches; then history is compacted, so resuming from the
    // last version seen is 410 Expired and only a relist can see the pod is gone.
    fake.closeWatches();
    fake.store.remove('pods', NS, 'boa-job-7-g1-r0');
    fake.store.compact();
    let statuses: readonly ReplicaStatus[] = [];
    for (let i = 0; i < 50 && !statuses[0]?.interrupted; i++) {
      statuses = await e.reconcile([job(7, 1, nodes.slice(0, 1))]);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Seen gone: deleted by someone else, so its job resumes as a new generation (not recreated alone).
    expect(statuses).toEqual([
      expect.objectContaining({
        jobId: 7,
        generation: 1,
        rank: 0,
        interrupted: true,
        reason: 'pod deleted by someone else',
      }),
    ]);
    expect(podNames()).toEqual([]);
    expect(lists()).toBeGreaterThan(listed);
  });

  it('a pod the API server refuses is reported failed with the reason, until its generation goes', async () => {
    const e = executor();
    const bad: DesiredJob = {
      jobId: 8,
      generation: 1,
      replicas: [
        { jobId: 8, generation: 1, rank: 0, node: nodes[0]!, gpus: 1, workload: { command: ['x'] }, env: {} },
      ],
    };
    const [status] = await e.reconcile([bad]);
    expect(status).toMatchObject({ jobId: 8, rank: 0, phase: 'failed' });
    expect(status?.reason).toMatch(/rejected.*422/);
    await e.reconcile([bad]);
    expect(podPosts()).toHaveLength(1); // not retried every tick
    expect(await e.reconcile([])).toEqual([]);
  });

  it("a pod its node turns away (GPUs held by another job's stopping pod) waits, then is created again", async () => {
    let now = 1_000_000;
    const e = createKubernetesExecutor(
      { terminationGraceSeconds: 60, kubernetes: { namespace: NS } },
      pino({ level: 'silent' }),
      {
        instanceId: 'test-boa',
        kubeConfig: fake.kubeConfig(),
        sleep: async () => undefined,
        random: () => 0.5,
        now: () => now,
      },
    );
    executors.push(e);
    const created = new Map<number, number>();
    const watch = fake.store.subscribe(fake.store.currentVersion(), (event) => {
      const match = /^boa-job-(\d+)-/.exec(event.object.metadata.name);
      if (event.resource === 'pods' && event.type === 'ADDED' && match)
        created.set(Number(match[1]), (created.get(Number(match[1])) ?? 0) + 1);
    });
    if (watch === 'expired') throw new Error('fake kube-api: history expired');
    const postsFor = (jobId: number) => created.get(jobId) ?? 0;
    /** Reconciles (the clock held) until the job's replica status passes the check: the watch is real. */
    const until = async (desired: DesiredJob[], jobId: number, check: (s?: ReplicaStatus) => boolean) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const status = (await e.reconcile(desired)).find((st) => st.jobId === jobId);
        if (check(status)) return status;
        if (Date.now() > deadline) throw new Error(`job ${jobId}: ${JSON.stringify(status)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const turnedAway = (s?: ReplicaStatus) => s?.phase === 'starting' && /not admitted/.test(s.reason ?? '');

    // Job 1 holds all 4 GPUs of the node; then it leaves and job 2 gets them while job 1's pod stops.
    await until([job(1, 1, [nodes[0]!])], 1, (s) => s?.phase === 'running');
    const next = [job(2, 1, [nodes[0]!])];
    const waiting = await until(next, 2, turnedAway);
    expect(waiting?.reason).toMatch(/not admitted by its node yet: .*nvidia.com\/gpu, requested: 4, used: 4/);
    // Job 1's pod says when its grace (60 s) ends, SIGKILL at the latest: the job view's stopping.killAt.
    const old = (await e.reconcile(next)).find((st) => st.jobId === 1);
    expect(old?.phase).toBe('stopping');
    const deletion = fake.store.get('pods', NS, 'boa-job-1-g1-r0')?.metadata.deletionTimestamp;
    expect(old?.killAt).toBe(Date.parse(deletion ?? 'none'));
    // Not a failure, and not created again while job 1's pod still stops there.
    for (let i = 0; i < 3; i++) {
      now += 30_000;
      expect(turnedAway(await until(next, 2, () => true))).toBe(true);
    }
    expect(postsFor(2)).toBe(1);
    fake.kubelet.finishTermination('boa-job-1-g1-r0');
    await until(next, 2, (s) => s?.phase === 'running');
    expect(postsFor(2)).toBe(2);

    // Turned away with nothing of boa's stopping there (the GPUs held by a pod boa does not own): removed
    // at once, then at most every 10 s, not at every reconcile.
    podHoldingGpus(fake, NS, nodes[1]!, 4);
    const third = [job(2, 1, [nodes[0]!]), job(3, 1, [nodes[1]!])];
    await until(third, 3, (s) => postsFor(3) === 2 && turnedAway(s));
    for (let i = 0; i < 6; i++) {
      now += 1_000;
      expect(turnedAway(await until(third, 3, () => true))).toBe(true);
    }
    expect(postsFor(3)).toBe(2);
    now += 10_000;
    await until(third, 3, (s) => postsFor(3) === 3 && turnedAway(s));
    now += 10_000;
    await until(third, 3, (s) => postsFor(3) === 4 && turnedAway(s));
    // Turned away four times with nothing of boa's stopping there: the node lacks the GPUs, a failure.
    now += 10_000;
    const failed = await until(third, 3, (s) => s?.phase === 'failed');
    expect(failed?.reason).toMatch(/turned away 4 times .*gpusPerNode/);
    now += 60_000;
    await e.reconcile(third);
    expect(postsFor(3)).toBe(4);
    watch.stop();
  });

  it('a job that leaves loses its pods gracefully, then its Service', async () => {
    const e = executor();
    await e.reconcile([job(9, 1, nodes)]);
    await e.reconcile([]);
    expect(fake.pods(NS).every((p) => p.metadata.deletionGracePeriodSeconds === 60)).toBe(true);
    expect(fake.services(NS)).toHaveLength(1); // kept while its pods terminate
    fake.kubelet.finishTermination();
    for (let i = 0; i < 50 && fake.services(NS).length > 0; i++) {
      await e.reconcile([]);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(fake.services(NS)).toEqual([]);
    expect(fake.pods(NS)).toEqual([]);
  });

  it("keeps an ended pod of a job no longer run for its log, within endedPodRetentionSeconds; the job's next generation still waits for it to go", async () => {
    const e = executor({ endedPodRetentionSeconds: 1 });
    const settle = async (desired: DesiredJob[], done: (s: readonly ReplicaStatus[]) => boolean) => {
      for (let i = 0; i < 100; i++) {
        const statuses = await e.reconcile(desired);
        if (done(statuses)) return statuses;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('never settled');
    };
    await e.reconcile([job(11, 1, [nodes[0]!])]);
    fake.kubelet.startPods();
    fake.kubelet.writeLog('boa-job-11-g1-r0', 'Traceback ...\nValueError: bad lr\n');
    fake.kubelet.exit('boa-job-11-g1-r0', 1);
    await settle([job(11, 1, [nodes[0]!])], (s) => s[0]?.phase === 'failed');
    // Its restart's backoff: the job runs nothing, and its failed pod stays, its log readable.
    await e.reconcile([]);
    expect(podNames()).toEqual(['boa-job-11-g1-r0']);
    expect(await e.logs!({ jobId: 11, rank: 0, tailLines: 1 })).toEqual({
      generation: 1,
      text: 'ValueError: bad lr\n',
    });
    // The next generation: the old pod goes first, then the new one is made.
    await settle([job(11, 2, [nodes[0]!])], () => podNames().join() === 'boa-job-11-g2-r0');
    // A job failed for good: kept for the retention, then removed with its Service.
    fake.kubelet.startPods();
    fake.kubelet.exit('boa-job-11-g2-r0', 1);
    await settle([job(11, 2, [nodes[0]!])], (s) => s[0]?.phase === 'failed');
    await e.reconcile([]);
    expect(podNames()).toEqual(['boa-job-11-g2-r0']);
    await new Promise((r) => setTimeout(r, 1100));
    await settle([], () => fake.pods(NS).length === 0 && fake.services(NS).length === 0);
  });

  it('takes namespace, service account, pull secrets and grace from the service config (file or BOA_* env)', async () => {
    const env = configFromEnv({
      BOA_JOBS_NAMESPACE: 'team-a',
      BOA_JOBS_SERVICE_ACCOUNT: 'trainer',
      BOA_IMAGE_PULL_SECRETS: 'ecr, ghcr',
      BOA_TERMINATION_GRACE_SECONDS: '45',
    });
    const config = configSchema.parse(env);
    expect(config.kubernetes).toEqual({
      namespace: 'team-a',
      serviceAccountName: 'trainer',
      imagePullSecrets: ['ecr', 'ghcr'],
      endedPodRetentionSeconds: 3600,
    });
    expect(() => configSchema.parse({ kubernetes: { namespace: 'Team A' } })).toThrow(
      /kubernetes.namespace must be a DNS label/,
    );
    const e = createKubernetesExecutor(config, pino({ level: 'silent' }), {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
    });
    executors.push(e);
    await e.reconcile([job(11, 1, nodes.slice(0, 1))]);
    const [pod] = fake.pods('team-a');
    expect(pod?.spec).toMatchObject({
      serviceAccountName: 'trainer',
      imagePullSecrets: [{ name: 'ecr' }, { name: 'ghcr' }],
      terminationGracePeriodSeconds: 45,
    });
    expect(fake.pods(NS)).toEqual([]);
  });

  it('finds the cluster through KUBECONFIG when no kubeconfig is given (as boot does)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-kubeconfig-'));
    const saved = {
      KUBECONFIG: process.env.KUBECONFIG,
      KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST,
    };
    try {
      writeFileSync(join(dir, 'config'), fake.kubeConfig().exportConfig());
      process.env.KUBECONFIG = join(dir, 'config');
      delete process.env.KUBERNETES_SERVICE_HOST;
      const e = createKubernetesExecutor(configSchema.parse({}), pino({ level: 'silent' }), {
        instanceId: 'test-boa',
      });
      executors.push(e);
      await e.reconcile([job(13, 1, nodes.slice(0, 1))]);
      expect(podNames()).toEqual(['boa-job-13-g1-r0']);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the rendezvous address is rank 0 through the job Service', () => {
    expect(executor().rendezvous?.(12, 1, nodes[0]!)).toEqual({
      addr: 'rank-0.boa-job-12.boa-jobs.svc',
      port: 29500,
    });
  });
});
