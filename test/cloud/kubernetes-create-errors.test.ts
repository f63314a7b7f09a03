/**
 * Container waiting reasons the kubelet retries and that pass: a loaded runtime's CreateContainerError
 * (a create past the kubelet's timeout, then its name still reserved), a CreateContainerConfigError of a
 * kubelet that has not read the Services or the job's Secret yet, and a pull whose layer content
 * went missing for a moment. They keep the replica starting, with the kubelet's reason, instead of
 * failing it (which restarts the job); a create error that lasts fails it after a while. The
 * permanent ones (a wrong image, a create that cannot work) still fail at once.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { TRANSIENT_CREATE_LIMIT_MS } from '../../src/cloud/kubernetes/create-errors.ts';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { jobOnNodes } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const POD = podName(7, 1, 0);
const RESERVED =
  'failed to reserve container name "train_boa-job-7-g1-r0_boa-jobs_5741ca94_0": name "train_boa-job-7-g1-r0_boa-jobs_5741ca94_0" is reserved for "7c54f31e3fc8b87a115f11a214efe060c94e93ae822c9819a472bfb382c2839c"';
const DEADLINE = 'context deadline exceeded';

let fake: FakeKubeApi;
let node: string;
let t: number;
let executor: Executor;

beforeEach(async () => {
  t = Date.now();
  // Pods stay Pending until the test starts them, so only waitOn() says what they wait for.
  fake = await startFakeKubeApi({ now: () => t });
  node = fake.kubelet.addNode().metadata.name;
  executor = createKubernetesExecutor(
    { terminationGraceSeconds: 60, kubernetes: { namespace: NS } },
    pino({ level: 'silent' }),
    {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
      now: () => t,
      sleep: async () => undefined,
      random: () => 0.5,
    },
  );
});
afterEach(async () => {
  await executor.close();
  await fake.close();
});

const job = () => jobOnNodes(7, 1, [node], { gpus: 1, env: () => ({}) });

/** Reconciles until rank 0's status passes `ok` (the executor's cache catching up with the fake). */
async function rank0Until(ok: (s: ReplicaStatus) => boolean, what: string): Promise<ReplicaStatus> {
  for (let i = 0; i < 300; i++) {
    const rank0 = (await executor.reconcile([job()])).find((s) => s.generation === 1 && s.rank === 0);
    if (rank0 && ok(rank0)) return rank0;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The pod made, then waiting with `reason: message`, as the executor reports it once it has seen so. */
async function waitingWith(reason: string, message: string): Promise<ReplicaStatus> {
  await rank0Until(() => fake.pods(NS).some((p) => p.metadata.name === POD), 'the pod');
  fake.kubelet.waitOn(POD, reason, message);
  return rank0Until((s) => s.reason?.startsWith(reason) ?? false, reason);
}

describe('Kubernetes executor: a CreateContainerError the runtime clears by itself', () => {
  it('keeps the replica starting with the kubelet reason, and it runs once the kubelet retries', async () => {
    expect(await waitingWith('CreateContainerError', RESERVED)).toMatchObject({
      phase: 'starting',
      reason: `CreateContainerError: ${RESERVED}`,
    });
    t += 60_000;
    fake.kubelet.waitOn(POD, 'CreateContainerError', DEADLINE);
    expect(await rank0Until((s) => s.reason?.endsWith(DEADLINE) ?? false, 'deadline')).toMatchObject({
      phase: 'starting',
    });
    t += 60_000;
    fake.kubelet.startPods([POD]);
    expect(await rank0Until((s) => s.phase !== 'starting', 'running')).toMatchObject({ phase: 'running' });
  });

  it('fails the replica once the error has lasted the limit, saying for how long', async () => {
    const start = t;
    await waitingWith('CreateContainerError', RESERVED);
    t = start + TRANSIENT_CREATE_LIMIT_MS - 1000;
    expect((await executor.reconcile([job()]))[0]).toMatchObject({ phase: 'starting' });
    t = start + TRANSIENT_CREATE_LIMIT_MS;
    expect((await executor.reconcile([job()]))[0]).toEqual({
      jobId: 7,
      generation: 1,
      rank: 0,
      node,
      phase: 'failed',
      reason: `CreateContainerError: ${RESERVED} (for ${TRANSIENT_CREATE_LIMIT_MS / 1000} s: the runtime did not clear it)`,
    });
  });

  it('counts only a wait seen without a break: a pod that moved on and came back starts again at zero', async () => {
    const start = t;
    await waitingWith('CreateContainerError', RESERVED);
    t = start + TRANSIENT_CREATE_LIMIT_MS - 10_000;
    fake.kubelet.waitOn(POD, 'ContainerCreating', 'pulling');
    await rank0Until((s) => s.reason?.startsWith('ContainerCreating') ?? false, 'ContainerCreating');
    fake.kubelet.waitOn(POD, 'CreateContainerError', DEADLINE);
    await rank0Until((s) => s.reason?.endsWith(DEADLINE) ?? false, 'the error again');
    t = start + TRANSIENT_CREATE_LIMIT_MS + 10_000;
    expect((await executor.reconcile([job()]))[0]).toMatchObject({ phase: 'starting' });
  });

  it('still fails at once a CreateContainerError that no wait clears', async () => {
    const noCommand = 'failed to generate container spec: failed to apply OCI options: no command specified';
    expect(await waitingWith('CreateContainerError', noCommand)).toMatchObject({
      phase: 'failed',
      reason: `CreateContainerError: ${noCommand}`,
    });
  });
});

describe('Kubernetes executor: a CreateContainerConfigError of a kubelet that has not read the API yet', () => {
  // The kubelet's own words (pkg/kubelet/kubelet_pods.go, util/manager/watch_based_manager.go).
  const NO_SERVICES = 'services have not yet been read at least once, cannot construct envvars';
  const SECRET_CACHE = 'failed to sync secret cache: timed out waiting for the condition';
  const NOT_REGISTERED = `object "${NS}"/"boa-job-7-token" not registered`;

  it('keeps the replica starting on a just-started kubelet that has not listed the Services, and it runs', async () => {
    expect(await waitingWith('CreateContainerConfigError', NO_SERVICES)).toMatchObject({
      phase: 'starting',
      reason: `CreateContainerConfigError: ${NO_SERVICES}`,
    });
    t += 30_000;
    fake.kubelet.startPods([POD]);
    expect(await rank0Until((s) => s.phase !== 'starting', 'running')).toMatchObject({ phase: 'running' });
  });

  for (const message of [SECRET_CACHE, NOT_REGISTERED])
    it(`keeps it starting on a Secret cache not ready: ${message.slice(0, 30)}`, async () => {
      expect(await waitingWith('CreateContainerConfigError', message)).toMatchObject({ phase: 'starting' });
    });

  it('fails it once that has lasted the limit, naming the kubelet', async () => {
    const start = t;
    await waitingWith('CreateContainerConfigError', NO_SERVICES);
    t = start + TRANSIENT_CREATE_LIMIT_MS - 1000;
    expect((await executor.reconcile([job()]))[0]).toMatchObject({ phase: 'starting' });
    t = start + TRANSIENT_CREATE_LIMIT_MS;
    expect((await executor.reconcile([job()]))[0]).toMatchObject({
      phase: 'failed',
      reason: `CreateContainerConfigError: ${NO_SERVICES} (for ${TRANSIENT_CREATE_LIMIT_MS / 1000} s: the kubelet did not clear it)`,
    });
  });

  it('still fails at once a Secret or key that is not there', async () => {
    const missing = `couldn't find key BOA_TOKEN in Secret ${NS}/boa-job-7-token`;
    expect(await waitingWith('CreateContainerConfigError', missing)).toMatchObject({
      phase: 'failed',
      reason: `CreateContainerConfigError: ${missing}`,
    });
  });
});

describe('Kubernetes executor: an image pull whose content went missing for a moment', () => {
  it('keeps the replica starting on containerd "content digest ... not found"', async () => {
    const digest =
      'failed to pull and unpack image "docker.io/repo/train:1": failed to unpack image on snapshotter overlayfs: content digest sha256:0c18b88b8db3c193eefeede31a80d5d0c850306076b7166910ed239685dd20b0: not found';
    expect(await waitingWith('ErrImagePull', digest)).toMatchObject({
      phase: 'starting',
      reason: `ErrImagePull: ${digest}`,
    });
    fake.kubelet.startPods([POD]);
    expect(await rank0Until((s) => s.phase !== 'starting', 'running')).toMatchObject({ phase: 'running' });
  });

  it('keeps the replica starting on a blob a registry or cache answered 404 for', async () => {
    const blob =
      'failed to pull and unpack image "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1": failed to copy: httpReadSeeker: failed open: content at https://123456789012.dkr.ecr.us-east-1.amazonaws.com/v2/train/blobs/sha256:9457426d68990df190301d2e20b8450c4f67d7559bdb7ded6c40d41ced6731f7 not found: not found';
    expect(await waitingWith('ErrImagePull', blob)).toMatchObject({ phase: 'starting' });
  });

  // The kubelet names the cause only in ErrImagePull, for seconds, then backs off naming none.
  const BACK_OFF = 'Back-off pulling image "repo/train:1"';
  async function seenOnlyBackingOff(pullError: string): Promise<ReplicaStatus> {
    await rank0Until(() => fake.pods(NS).some((p) => p.metadata.name === POD), 'the pod');
    fake.kubelet.waitOn(POD, 'ErrImagePull', pullError);
    fake.kubelet.waitOn(POD, 'ImagePullBackOff', BACK_OFF);
    return rank0Until((s) => s.reason?.startsWith('ImagePullBackOff') ?? false, 'the back-off');
  }

  it('fails a wrong image a pass sees only backing off, naming the pull error before it', async () => {
    const wrong =
      'rpc error: code = NotFound desc = failed to pull and unpack image "repo/train:1": failed to resolve reference "repo/train:1": repo/train:1: not found';
    expect(await seenOnlyBackingOff(wrong)).toMatchObject({
      phase: 'failed',
      reason: `ImagePullBackOff: ${BACK_OFF} (last pull: ErrImagePull: ${wrong})`,
    });
  });

  it('keeps a pull that passes starting while it backs off, naming its last error', async () => {
    const throttled = 'failed to pull: 429 Too Many Requests (toomanyrequests)';
    expect(await seenOnlyBackingOff(throttled)).toMatchObject({
      phase: 'starting',
      reason: `ImagePullBackOff: ${BACK_OFF} (last pull: ErrImagePull: ${throttled})`,
    });
    fake.kubelet.startPods([POD]);
    expect(await rank0Until((s) => s.phase !== 'starting', 'running')).toMatchObject({ phase: 'running' });
  });

  for (const wrong of [
    'failed to pull and unpack image "docker.io/repo/train:2": failed to resolve reference "docker.io/repo/train:2": docker.io/repo/train:2: not found',
    'rpc error: code = NotFound desc = failed to pull and unpack image "repo/train:2": failed to resolve reference "repo/train:2": repo/train:2: not found: manifest unknown: manifest unknown',
    'pull access denied for repo/trian, repository does not exist or may require docker login',
  ])
    it(`still fails a wrong image at once: ${wrong.slice(-40)}`, async () => {
      expect(await waitingWith('ErrImagePull', wrong)).toMatchObject({
        phase: 'failed',
        reason: `ErrImagePull: ${wrong}`,
      });
    });
});
