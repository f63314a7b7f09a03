// The Kubernetes executor when API calls fail or the cluster changes under it (a review's tests, 2026-12-05):
// the first group pins what held; the second, what the review found wrong, each fixed with its test.
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CLAIM_LEASE_NAME,
  createKubernetesExecutor,
  NamespaceClaimedError,
  podName,
} from '../../src/cloud/kubernetes/index.ts';
import { runLimited } from '../../src/cloud/kubernetes/run-limited.ts';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import type { FakeKubeApi, RequestInfo } from '../fakes/kube-api/index.ts';
import { fakeKubeCluster, jobOnNodes, podHoldingGpus, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'review-jobs';
const cluster = fakeKubeCluster(NS);
let fake: FakeKubeApi;
let nodes: string[];
beforeEach(() => void ({ fake, nodes } = cluster));

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const job = (jobId: number, generation: number, on: readonly string[], gpus = 1): DesiredJob =>
  jobOnNodes(jobId, generation, on, { gpus, env: () => ({}) });

type Line = Record<string, unknown>;

/** An executor on the fake with its log lines kept, and optionally its own clock and sleep. */
function executorWithLog(
  options: { now?: () => number; sleep?: (ms: number) => Promise<void>; requestTimeoutMs?: number } = {},
) {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const executor: Executor = createKubernetesExecutor(
    {
      terminationGraceSeconds: 60,
      kubernetes: {
        namespace: NS,
        ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      },
    },
    logger,
    {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
      sleep: options.sleep ?? (async (ms) => void cluster.delays.push(ms)),
      random: () => 0.5,
      ...(options.now ? { now: options.now } : {}),
    },
  );
  cluster.executors.push(executor);
  const events = (name: string) => lines.filter((l) => l.event === name);
  return { executor, lines, events };
}

const podPosts = (status?: number) =>
  fake.requests.filter(
    (r) => r.method === 'POST' && r.path.endsWith('/pods') && (status === undefined || r.status === status),
  );
const podNames = () =>
  fake
    .pods(NS)
    .map((p) => p.metadata.name)
    .sort();
const isPodDelete = (name: string) => (r: RequestInfo) =>
  r.method === 'DELETE' && r.path.endsWith(`/pods/${name}`);
/** The pod's next `count` DELETEs applied by the API server, their answers lost (a load balancer's 503). */
const deleteAppliedAnswerLost = (name: string, count: number) =>
  fake.faults.inject({
    status: 503,
    count,
    match: (r) => {
      if (!isPodDelete(name)(r)) return false;
      if (fake.store.get('pods', NS, name)) fake.store.remove('pods', NS, name);
      return true;
    },
  });

const isPodCreate = (r: RequestInfo) => r.method === 'POST' && r.path.endsWith(`/namespaces/${NS}/pods`);
/** The next create matching `match` made by the API server, its answer lost: a 503, or none (`timeout`). */
const createAppliedAnswerLost = (
  match: (r: RequestInfo) => boolean,
  lost: { timeout: true } | { status: 503 },
) => fake.faults.inject({ ...lost, applied: true, count: 1, match });

/** Reconciles until `ok` holds of the statuses (the executor's watch catching up), or fails. */
async function until(
  executor: Executor,
  desired: DesiredJob[],
  ok: (statuses: readonly ReplicaStatus[]) => boolean,
  what: string,
): Promise<readonly ReplicaStatus[]> {
  for (let i = 0; i < 200; i++) {
    const statuses = await executor.reconcile(desired);
    if (ok(statuses)) return statuses;
    await pause(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const running = (jobId: number) => (s: readonly ReplicaStatus[]) =>
  s.some((r) => r.jobId === jobId && r.phase === 'running');

/** The next pod create is answered only once the returned function is called. */
function holdNextPodCreate(): () => void {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  fake.faults.inject({ after: held, count: 1, match: isPodCreate });
  return release;
}

describe('Kubernetes executor under failing calls (review)', () => {
  it('a DELETE that timed out at the client but succeeded on the server is retried and taken as done', async () => {
    const { executor, events } = executorWithLog({ requestTimeoutMs: 300 });
    const desired = [job(1, 1, [nodes[0]!])];
    await until(executor, desired, running(1), 'job 1 running');
    const name = podName(1, 1, 0);
    fake.faults.inject({
      timeout: true,
      count: 1,
      match: (r) => {
        if (!isPodDelete(name)(r)) return false;
        // The API server applies it (the pod terminating, its grace begun); its answer never comes.
        fake.store.markTerminating('pods', NS, name, 60);
        return true;
      },
    });
    const delays = cluster.delays.length;
    await executor.reconcile([]);
    expect(fake.faults.pending()).toBe(0);
    // One retry, answered with the pod already terminating: done, not a failed step.
    expect(cluster.delays.length - delays).toBe(1);
    const deletes = fake.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${name}`));
    expect(deletes.map((r) => r.status)).toEqual([200]);
    expect(events('kube.reconcile.failed')).toEqual([]);
    expect(events('kube.pod.deleting')).toHaveLength(1);
    // Seen stopping (no second delete is sent); once it is gone, so is the Service.
    expect(await executor.reconcile([])).toEqual([expect.objectContaining({ jobId: 1, phase: 'stopping' })]);
    expect(
      fake.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${name}`)),
    ).toHaveLength(1);
    fake.kubelet.finishTermination(name);
    await reconcileUntil(executor, [], () => fake.services(NS).length === 0, 'service deleted');
    expect(await executor.reconcile([])).toEqual([]);
    expect(events('kube.pod.vanished')).toEqual([]);
  });

  it('a DELETE whose pod is already gone by the retry (404) is done, not a failed step', async () => {
    const { executor, events } = executorWithLog();
    // A pod Pending on a NotReady node is deleted at once: the fake removes it, then answers 503.
    fake.kubelet.setNodeReady(nodes[1]!, false);
    const desired = [job(2, 1, [nodes[1]!])];
    await until(executor, desired, (s) => s.some((r) => r.jobId === 2), 'job 2 seen');
    const name = podName(2, 1, 0);
    deleteAppliedAnswerLost(name, 1);
    expect(await executor.reconcile([])).toEqual([]);
    expect(fake.faults.pending()).toBe(0);
    expect(podNames()).toEqual([]);
    expect(events('kube.reconcile.failed')).toEqual([]);
  });

  it('a DELETE answered 409 Conflict, then 500, is retried within the pass and the pod stops', async () => {
    const { executor, events } = executorWithLog();
    const desired = [job(3, 1, [nodes[0]!])];
    await until(executor, desired, running(3), 'job 3 running');
    const name = podName(3, 1, 0);
    fake.faults.inject({ status: 409, reason: 'Conflict', count: 1, match: isPodDelete(name) });
    fake.faults.inject({ status: 500, count: 1, match: isPodDelete(name) });
    await executor.reconcile([]);
    expect(fake.faults.pending()).toBe(0);
    expect(fake.pods(NS).find((p) => p.metadata.name === name)?.metadata.deletionTimestamp).toBeDefined();
    expect(events('kube.reconcile.failed')).toEqual([]);
  });

  it('throttling (429, Retry-After 30) on every call past the retry budget fails the pass; the next creates each pod once and fails nothing', async () => {
    const { executor, events } = executorWithLog();
    await until(executor, [job(4, 1, [nodes[0]!])], running(4), 'job 4 running');
    // Every request but watches throttled, far longer than four attempts; the watch is dropped too, so
    // the pass must list again.
    fake.closeWatches();
    fake.faults.inject({ status: 429, retryAfterSeconds: 30, count: 10_000 });
    const desired = [job(4, 1, [nodes[0]!]), job(5, 1, nodes)];
    const delaysBefore = cluster.delays.length;
    await expect(executor.reconcile(desired)).rejects.toThrow(/429|TooManyRequests|gave up/);
    // Retry-After honoured only up to the cap.
    const delays = cluster.delays.slice(delaysBefore);
    expect(delays.length).toBeGreaterThan(0);
    expect(Math.max(...delays)).toBe(5_000);
    expect(podNames()).toEqual([podName(4, 1, 0)]);
    fake.faults.clear();
    const statuses = await until(executor, desired, running(5), 'job 5 running');
    expect(podPosts(201).filter((r) => r.path.includes(NS))).toHaveLength(3);
    expect(podNames()).toEqual([podName(4, 1, 0), podName(5, 1, 0), podName(5, 1, 1)]);
    // The running job is neither failed nor taken for gone.
    expect(statuses.filter((s) => s.phase === 'failed' || s.interrupted)).toEqual([]);
    expect(events('kube.pod.vanished')).toEqual([]);
  });

  it('writes throttled past the retries (reads fine) fail only their step, as an outage of that job; the next pass creates the pod once', async () => {
    const { executor, events } = executorWithLog();
    await until(executor, [job(6, 1, [nodes[0]!])], running(6), 'job 6 running');
    fake.faults.inject({ status: 429, count: 4, match: (r) => r.method === 'POST' });
    const desired = [job(6, 1, [nodes[0]!]), job(7, 1, [nodes[1]!])];
    const statuses = await executor.reconcile(desired);
    expect(statuses.find((s) => s.jobId === 6)?.phase).toBe('running');
    expect(statuses.some((s) => s.jobId === 7)).toBe(false);
    expect([...(executor.outage?.() ?? [])]).toEqual([7]);
    expect(events('kube.reconcile.failed')).toHaveLength(1);
    await until(executor, desired, running(7), 'job 7 running');
    expect(podPosts(201).filter((r) => r.path.includes(NS))).toHaveLength(2);
    expect([...(executor.outage?.() ?? [])]).toEqual([]);
  });

  it('410 Expired on the resumed watch: the relist loses no live pod, and only the pod deleted meanwhile is reported gone', async () => {
    const { executor, events } = executorWithLog();
    const desired = [job(8, 1, [nodes[0]!]), job(9, 1, [nodes[1]!])];
    await until(executor, desired, (s) => running(8)(s) && running(9)(s), 'jobs 8 and 9 running');
    const posts = podPosts().length;
    fake.closeWatches();
    fake.store.remove('pods', NS, podName(8, 1, 0));
    fake.store.compact();
    const statuses = await until(
      executor,
      desired,
      (s) => s.some((r) => r.jobId === 8 && r.interrupted),
      'job 8 interrupted',
    );
    expect(statuses.find((s) => s.jobId === 9)).toMatchObject({ phase: 'running' });
    expect(statuses.find((s) => s.jobId === 9)?.interrupted).toBeUndefined();
    expect(events('kube.pod.vanished').map((l) => l.pod)).toEqual([podName(8, 1, 0)]);
    // The gone replica is not made again alone, and nothing else is made.
    for (let i = 0; i < 3; i++) await executor.reconcile(desired);
    expect(podPosts()).toHaveLength(posts);
    expect(events('kube.watch.expired').length).toBeGreaterThan(0);
  });

  it('a node removed while its pod is being created: the pod waits as starting, and once collected is reported gone, not made again', async () => {
    const { executor } = executorWithLog();
    const release = holdNextPodCreate();
    const desired = [job(10, 1, [nodes[1]!])];
    const pass = executor.reconcile(desired);
    while (fake.faults.pending() > 0) await pause(5);
    fake.kubelet.removeNode(nodes[1]!);
    release();
    await pass;
    const name = podName(10, 1, 0);
    expect(podNames()).toEqual([name]);
    const waiting = await executor.reconcile(desired);
    expect(waiting).toEqual([expect.objectContaining({ jobId: 10, phase: 'starting' })]);
    // The pod garbage collector removes a pod bound to a node that no longer exists.
    fake.store.remove('pods', NS, name);
    const gone = await until(executor, desired, (s) => s.some((r) => r.interrupted), 'pod seen gone');
    expect(gone).toEqual([
      expect.objectContaining({
        jobId: 10,
        rank: 0,
        interrupted: true,
        reason: 'pod deleted by someone else',
      }),
    ]);
    await executor.reconcile(desired);
    expect(podPosts()).toHaveLength(1);
  });

  it('a pod Pending on a NotReady node waits as starting: not deleted, readmitted or taken for gone; it runs once the node is Ready', async () => {
    const { executor, events } = executorWithLog();
    fake.kubelet.setNodeReady(nodes[1]!, false);
    const desired = [job(18, 1, [nodes[1]!])];
    for (let i = 0; i < 5; i++) {
      expect(await executor.reconcile(desired)).toEqual([
        expect.objectContaining({ jobId: 18, rank: 0, phase: 'starting' }),
      ]);
      await pause(10);
    }
    expect(fake.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(podPosts()).toHaveLength(1);
    expect(events('kube.pod.vanished')).toEqual([]);
    fake.kubelet.setNodeReady(nodes[1]!, true);
    await until(executor, desired, running(18), 'job 18 running');
    expect(podPosts()).toHaveLength(1);
  });

  it("the namespace claim taken by another boa mid-pass: the next pass fails before any write, and deletes none of the new holder's pods", async () => {
    const clock = { t: Date.now() };
    const { executor } = executorWithLog({ now: () => clock.t });
    await until(executor, [job(11, 1, [nodes[0]!])], running(11), 'job 11 running');
    const release = holdNextPodCreate();
    const pass = executor.reconcile([job(11, 1, [nodes[0]!]), job(12, 1, [nodes[1]!])]);
    while (fake.faults.pending() > 0) await pause(5);
    // Another boa holds the Lease now (its own renewal just made).
    fake.store.update('leases', NS, CLAIM_LEASE_NAME, (lease) => ({
      ...lease,
      spec: { ...lease.spec, holderIdentity: 'other-boa', renewTime: new Date(clock.t).toISOString() },
    }));
    release();
    await pass;
    const before = podNames();
    const requests = fake.requests.length;
    await expect(executor.reconcile([])).rejects.toBeInstanceOf(NamespaceClaimedError);
    expect(podNames()).toEqual(before);
    expect(fake.pods(NS).every((p) => !p.metadata.deletionTimestamp)).toBe(true);
    const writes = fake.requests.slice(requests).filter((r) => r.method !== 'GET');
    expect(writes).toEqual([]);
  });

  for (const lost of [{ status: 503 as const }, { timeout: true as const }]) {
    it(`a pod create applied but ${'status' in lost ? 'answered 503' : 'never answered'}: the retry's AlreadyExists adopts it; nothing failed, nothing made twice`, async () => {
      const { executor, events } = executorWithLog({ requestTimeoutMs: 300 });
      createAppliedAnswerLost(isPodCreate, lost);
      const desired = [job(20, 1, [nodes[0]!])];
      const first = await executor.reconcile(desired);
      expect(fake.faults.pending()).toBe(0);
      // The retry (after the 503, or the client's timeout) met the pod the first made.
      expect(podPosts().map((r) => r.status)).toEqual('status' in lost ? [503, 409] : [409]);
      expect(events('kube.pod.adopted')).toEqual([expect.objectContaining({ pod: podName(20, 1, 0) })]);
      expect(events('kube.reconcile.failed')).toEqual([]);
      expect([...(executor.outage?.() ?? [])]).toEqual([]);
      expect(first).toEqual([expect.objectContaining({ jobId: 20, rank: 0 })]);
      const statuses = await until(executor, desired, running(20), 'job 20 running');
      expect(statuses.filter((s) => s.phase === 'failed' || s.interrupted)).toEqual([]);
      expect(podNames()).toEqual([podName(20, 1, 0)]);
      expect(events('kube.pod.vanished')).toEqual([]);
    });
  }

  it("a Service create applied but answered 503: the retry's AlreadyExists reads it, and the job's pod is owned by it", async () => {
    const { executor, events } = executorWithLog();
    createAppliedAnswerLost((r) => r.method === 'POST' && r.path.endsWith('/services'), { status: 503 });
    const desired = [job(21, 1, [nodes[0]!])];
    await until(executor, desired, running(21), 'job 21 running');
    expect(fake.faults.pending()).toBe(0);
    const services = fake.services(NS);
    expect(services).toHaveLength(1);
    const posts = fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/services'));
    expect(posts.map((r) => r.status)).toEqual([503, 409]);
    expect(fake.pods(NS)[0]?.metadata.ownerReferences?.map((o) => o.uid)).toEqual([
      services[0]!.metadata.uid,
    ]);
    expect(events('kube.reconcile.failed')).toEqual([]);
    expect(podPosts().map((r) => r.status)).toEqual([201]);
  });

  it('two reconciles of one executor overlapping create each pod once; both report every rank', async () => {
    const { executor, events } = executorWithLog();
    const desired = [job(13, 1, nodes)];
    const [a, b] = await Promise.all([executor.reconcile(desired), executor.reconcile(desired)]);
    expect(podNames()).toEqual([podName(13, 1, 0), podName(13, 1, 1)]);
    expect(podPosts(201)).toHaveLength(2);
    expect(a.map((s) => s.rank).sort()).toEqual([0, 1]);
    expect(b.map((s) => s.rank).sort()).toEqual([0, 1]);
    await until(
      executor,
      desired,
      (s) => s.filter((r) => r.phase === 'running').length === 2,
      'both running',
    );
    expect(events('kube.pod.vanished')).toEqual([]);
  });
});

describe('runLimited', () => {
  it('runs every task once, at most `limit` at a time, returning each failure and stopping none', async () => {
    let inFlight = 0;
    let most = 0;
    const ran: number[] = [];
    const tasks = Array.from({ length: 9 }, (_, i) => async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await pause(5);
      inFlight--;
      ran.push(i);
      if (i % 3 === 0) throw new Error(`task ${i}`);
    });
    const errors = await runLimited(tasks, 2);
    expect(ran.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(most).toBe(2);
    expect(errors.map((e) => (e as Error).message).sort()).toEqual(['task 0', 'task 3', 'task 6']);
    expect(await runLimited([], 4)).toEqual([]);
  });
});

describe('Kubernetes executor: found in review, fixed', () => {
  /**
   * Was (pod-writes.ts delete / vanished.ts; fixed by noting boa's delete before it is sent):
   * a readmission's DELETE that the API server applied but
   * whose answer never came (503 from the load balancer, past the retries) leaves the pod in
   * VanishedPods' `seen`; its absence at the next pass is taken for a deletion by someone else: the
   * replica is reported interrupted ("pod deleted by someone else") and never created again in its
   * generation, so the whole job restarts instead of the pod being made again.
   */
  it('a turned-away pod whose readmission DELETE was applied but answered 503 past the retries is made again, not reported deleted by someone else', async () => {
    let now = 1_000_000;
    const { executor, events } = executorWithLog({ now: () => now });
    // Something boa does not own holds all 4 GPUs of the second node: boa's pod there is turned away.
    podHoldingGpus(fake, NS, nodes[1]!, 4);
    const name = podName(14, 1, 0);
    deleteAppliedAnswerLost(name, 4);
    const desired = [job(14, 1, [nodes[1]!], 4)];
    await until(executor, desired, () => fake.faults.pending() === 0, 'the readmission delete tried');
    expect(events('kube.reconcile.failed')).toHaveLength(1);
    expect(podNames()).toEqual(['someone-else']);
    now += 60_000;
    const statuses = await until(
      executor,
      desired,
      (s) => s.some((r) => r.jobId === 14 && (r.interrupted || podPosts(201).length >= 2)),
      'the replica made again or reported',
    );
    expect(events('kube.pod.vanished')).toEqual([]);
    expect(statuses.filter((s) => s.interrupted)).toEqual([]);
    expect(podPosts(201)).toHaveLength(2);
  });

  /**
   * Was (cache.ts current; fixed: a timed resync that fails is logged and the watch's objects served):
   * the periodic resync (every resyncSeconds, a safety net) is a
   * LIST that, throttled past the retries (429: API Priority and Fairness throttles LISTs first), fails
   * the whole pass although the watch is up and the cache current: no statuses that pass, every start
   * deadline cleared (executorFailed), and since listedAt is not advanced every later pass lists again
   * and fails the same way for as long as LISTs are throttled.
   */
  it('a periodic resync throttled past the retries, the watch still up, does not fail the pass', async () => {
    const clock = { t: Date.now() };
    const { executor } = executorWithLog({ now: () => clock.t });
    const desired = [job(17, 1, [nodes[0]!])];
    await until(executor, desired, running(17), 'job 17 running');
    expect(fake.openWatches()).toBeGreaterThan(0);
    clock.t += 301_000; // past resyncSeconds (300)
    fake.faults.inject({
      status: 429,
      count: 4,
      match: (r) => r.method === 'GET' && !r.watch && r.path.endsWith(`/namespaces/${NS}/pods`),
    });
    const statuses = await executor.reconcile(desired);
    expect(fake.faults.pending()).toBe(0);
    expect(statuses).toEqual([expect.objectContaining({ jobId: 17, phase: 'running' })]);
  });

  /**
   * Was (pod-writes.ts delete, create-refusals.ts; fixed: a failed delete is an outage of its job):
   * the DELETE of an older generation's ended pod
   * failing for no fault of the job (500/503/429 past the retries: an API server or a DELETE webhook
   * down) blocks the new generation's pods, yet is not reported as an outage of that job. Its start
   * deadline keeps running (start-deadlines.ts only holds it for older replicas still running), so an
   * outage of DELETEs as long as startTimeoutSeconds fails the generation as the job's fault, exactly
   * what CreateRefusals.stepFailed was added to prevent for the Service, policy and Secret writes.
   */
  it("an older generation's pod whose DELETE fails 503 past the retries makes the job's new generation an outage", async () => {
    const { executor } = executorWithLog();
    await until(executor, [job(15, 1, [nodes[0]!])], running(15), 'job 15 running');
    fake.kubelet.exit(podName(15, 1, 0), 1);
    await until(
      executor,
      [job(15, 1, [nodes[0]!])],
      (s) => s.some((r) => r.jobId === 15 && r.phase === 'failed'),
      'generation 1 failed',
    );
    fake.faults.inject({ status: 503, count: 4, match: isPodDelete(podName(15, 1, 0)) });
    await executor.reconcile([job(15, 2, [nodes[0]!])]);
    expect(fake.faults.pending()).toBe(0);
    expect(podNames()).toEqual([podName(15, 1, 0)]); // generation 2 waits for it
    expect([...(executor.outage?.() ?? [])]).toEqual([15]);
  });
  /**
   * Was (pod-writes.ts create; fixed: a failed read of the pod that exists fails the create as any
   * failed create does): a create answered AlreadyExists whose read of the existing pod then fails past
   * the retries (503, 429: the API server down) failed the step but was not an outage of the job, so its
   * start deadline ran on, as a failed create's does not.
   */
  it('a create answered AlreadyExists whose read of the pod fails 503 past the retries is an outage of the job', async () => {
    const { executor, events } = executorWithLog();
    const name = podName(22, 1, 0);
    createAppliedAnswerLost(isPodCreate, { status: 503 });
    fake.faults.inject({
      status: 503,
      count: 4,
      match: (r) => r.method === 'GET' && r.path.endsWith(`/pods/${name}`),
    });
    const desired = [job(22, 1, [nodes[0]!])];
    await executor.reconcile(desired);
    expect(fake.faults.pending()).toBe(0);
    expect(podPosts().map((r) => r.status)).toEqual([503, 409]);
    expect(events('kube.reconcile.failed')).toHaveLength(1);
    expect([...(executor.outage?.() ?? [])]).toEqual([22]);
    // The next pass hears of the pod and takes it as it is.
    await until(executor, desired, running(22), 'job 22 running');
    expect([...(executor.outage?.() ?? [])]).toEqual([]);
    expect(podNames()).toEqual([name]);
  });
  /**
   * Was (service-writes.ts ensure; fixed: a Service being deleted is not one to own pods): the job's
   * Service deleted while a finalizer holds it (a policy engine's, a LoadBalancer's cleanup) was taken
   * as the job's, read from the cache (the watch heard of the deletion) or from the API server (the
   * watch quiet), and the job's next pods were made owned by it, to be collected with it once the
   * finalizer let it go.
   */
  it.each([
    ['heard by the watch', false],
    ['not heard (the watch quiet)', true],
  ])(
    "the job's Service held by a finalizer while being deleted (%s): no pod is made owned by it; once it is gone, a new one owns them",
    async (_, quiet) => {
      const { executor, events } = executorWithLog();
      const desired = [job(25, 1, nodes)];
      // The second replica's create fails this pass: it is the one made while the Service is going.
      let creates = 0;
      fake.faults.inject({ status: 503, count: 4, match: (r) => isPodCreate(r) && ++creates > 1 });
      await executor.reconcile(desired);
      expect(podNames()).toEqual([podName(25, 1, 0)]);
      await vi.waitFor(() => expect(fake.openWatches()).toBe(4), { timeout: 20_000 }); // pods, services, policies, nodes
      if (quiet) fake.stallWatches();
      const [held] = fake.services(NS);
      const name = held!.metadata.name;
      fake.store.update('services', NS, name, (svc) => ({
        ...svc,
        metadata: { ...svc.metadata, finalizers: ['example.com/hold'] },
      }));
      fake.store.markTerminating('services', NS, name, 0);
      if (!quiet) await pause(50); // the watch's turn
      await executor.reconcile(desired);
      await executor.reconcile(desired);
      expect(podNames()).toEqual([podName(25, 1, 0)]);
      const failed = events('kube.reconcile.failed').map((l) => String(l.error));
      expect(failed.at(-1)).toMatch(/Service .* is being deleted .*held by example\.com\/hold/);

      // The finalizer done: the Service goes, and the pod it owned with it (reported gone: the job's
      // next generation is the service's to start). The replica waiting is made, owned by a new one.
      fake.store.remove('services', NS, name);
      const made = () => fake.pods(NS).some((p) => p.metadata.name === podName(25, 1, 1));
      await until(executor, desired, made, "job 25's rank 1 made"); // heard or not: the API server's
      const [service] = fake.services(NS);
      expect(service?.metadata.uid).not.toBe(held!.metadata.uid);
      const second = fake.pods(NS).find((p) => p.metadata.name === podName(25, 1, 1));
      expect(second?.metadata.ownerReferences?.map((o) => o.uid)).toEqual([service!.metadata.uid]);
    },
  );
  /**
   * Was (service-writes.ts ensure; fixed: the Service a job's pods are to be owned by is read first,
   * and one gone or not the cache's has every cache list again): with the executor's watch gone quiet,
   * the job's Service deleted from outside (kubectl delete svc) was still the cache's, and the job's
   * next pods were created owned by it, to be collected at once by the garbage collector, until the
   * watch's timeout (5 minutes) or the resync told boa.
   */
  it.each([
    ['deleted', false],
    ['deleted and made again by hand', true],
  ])(
    "the job's Service %s from outside while the watch is quiet: its next pod is owned by the Service there is, not collected",
    async (_, remade) => {
      const { executor, events } = executorWithLog();
      const desired = [job(23, 1, nodes)];
      // The second replica's create fails this pass: it is the one made after the Service is gone.
      let creates = 0;
      fake.faults.inject({ status: 503, count: 4, match: (r) => isPodCreate(r) && ++creates > 1 });
      await executor.reconcile(desired);
      expect(fake.faults.pending()).toBe(0);
      expect(podNames()).toEqual([podName(23, 1, 0)]);
      await vi.waitFor(() => expect(fake.openWatches()).toBe(4), { timeout: 20_000 }); // pods, services, policies, nodes
      fake.stallWatches();
      const [deleted] = fake.services(NS);
      await fake
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .deleteNamespacedService({ name: deleted!.metadata.name, namespace: NS });
      if (remade) {
        // Another Service of that name (kubectl apply of a saved manifest): a new uid, still not boa's cache's.
        const { name, labels } = deleted!.metadata;
        await fake
          .kubeConfig()
          .makeApiClient(CoreV1Api)
          .createNamespacedService({
            namespace: NS,
            body: { metadata: { name, labels }, spec: deleted!.spec },
          });
      }

      await executor.reconcile(desired);
      const [service] = fake.services(NS);
      expect(service?.metadata.uid).toBeDefined();
      expect(service?.metadata.uid).not.toBe(deleted!.metadata.uid);
      const second = fake.pods(NS).find((p) => p.metadata.name === podName(23, 1, 1));
      expect(second?.metadata.ownerReferences?.map((o) => o.uid)).toEqual([service!.metadata.uid]);
      await pause(20); // the garbage collector's turn
      expect(
        fake.pods(NS).find((p) => p.metadata.name === podName(23, 1, 1))?.metadata.deletionTimestamp,
      ).toBeUndefined();
      expect(events('kube.reconcile.failed')).toHaveLength(1); // the first pass's
      // The next pass lists again: the first replica, collected with the Service, is no longer running.
      const next = await executor.reconcile(desired);
      expect(next.find((s) => s.rank === 0)).toMatchObject({ phase: 'stopping' });
      expect(events('kube.service.changed')).toHaveLength(1);
    },
  );
});
