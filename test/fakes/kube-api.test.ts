import {
  ApiException,
  CoreV1Api,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { connectionAllowed, type FakeKubeApi, type KubeObject, startFakeKubeApi } from './kube-api/index.ts';

const NS = 'jobs';

function pod(name: string, labels: Record<string, string>, extra: Partial<V1Pod> = {}): V1Pod {
  return {
    metadata: { name, labels, ...extra.metadata },
    spec: { containers: [{ name: 'main', image: 'busybox' }], ...extra.spec },
  };
}

async function failure(call: Promise<unknown>): Promise<ApiException<unknown>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiException);
  return error as ApiException<unknown>;
}

/** Collects watch events until `until` holds, then aborts the stream. */
function watchUntil(
  fake: FakeKubeApi,
  params: Record<string, string>,
  until: (events: { type: string; name: string }[]) => boolean,
): Promise<{ type: string; name: string; code?: number }[]> {
  return new Promise((resolve, reject) => {
    const events: { type: string; name: string; code?: number }[] = [];
    let controller: AbortController | undefined;
    const finish = () => {
      controller?.abort();
      resolve(events);
    };
    void new Watch(fake.kubeConfig())
      .watch(
        `/api/v1/namespaces/${NS}/pods`,
        params,
        (type, obj) => {
          events.push({ type, name: obj?.metadata?.name, code: obj?.code });
          if (until(events)) finish();
        },
        (err) => (err && err.name !== 'AbortError' ? reject(err) : resolve(events)),
      )
      .then((c) => {
        controller = c;
        if (until(events)) finish();
      });
  });
}

describe('fake Kubernetes API server, through the real @kubernetes/client-node', () => {
  let fake: FakeKubeApi;
  let api: CoreV1Api;

  beforeEach(async () => {
    fake = await startFakeKubeApi();
    api = fake.kubeConfig(NS).makeApiClient(CoreV1Api);
  });
  afterEach(() => fake.close());

  it('creates, refuses duplicates, and lists by label and by spec.nodeName', async () => {
    const node = fake.kubelet.addNode({ gpus: 4, instanceId: 'i-0abc' });
    expect(node.spec.providerID).toBe('aws:///us-east-1a/i-0abc');
    expect(node.status.allocatable['nvidia.com/gpu']).toBe('4');
    await api.createNamespacedPod({
      namespace: NS,
      body: pod(
        'a',
        { app: 'x' },
        { spec: { nodeName: node.metadata.name, containers: [{ name: 'm', image: 'i' }] } },
      ),
    });
    await api.createNamespacedPod({ namespace: NS, body: pod('b', { app: 'y' }) });
    const dup = await failure(api.createNamespacedPod({ namespace: NS, body: pod('a', {}) }));
    expect(dup.code).toBe(409);
    expect((await failure(api.createNamespacedPod({ namespace: NS, body: pod('Bad_Name', {}) }))).code).toBe(
      422,
    );

    const byLabel = await api.listNamespacedPod({ namespace: NS, labelSelector: 'app in (x,z)' });
    expect(byLabel.items.map((p) => p.metadata?.name)).toEqual(['a']);
    const byNode = await api.listNamespacedPod({
      namespace: NS,
      fieldSelector: `spec.nodeName=${node.metadata.name}`,
    });
    expect(byNode.items.map((p) => p.metadata?.name)).toEqual(['a']);
    expect((await api.listNamespacedPod({ namespace: 'other' })).items).toEqual([]);
    expect(Number(byNode.metadata?.resourceVersion)).toBe(fake.store.currentVersion());
  });

  it('runs pods through the kubelet and reports exit codes', async () => {
    const node = fake.kubelet.addNode();
    await api.createNamespacedPod({
      namespace: NS,
      body: pod('p', {}, { spec: { nodeName: node.metadata.name, containers: [{ name: 'm', image: 'i' }] } }),
    });
    expect((await api.readNamespacedPod({ name: 'p', namespace: NS })).status?.phase).toBe('Pending');
    expect(fake.kubelet.startPods()).toEqual(['p']);
    expect((await api.readNamespacedPod({ name: 'p', namespace: NS })).status?.phase).toBe('Running');
    fake.kubelet.exit('p', 3);
    const ended = await api.readNamespacedPod({ name: 'p', namespace: NS });
    expect(ended.status?.phase).toBe('Failed');
    expect(ended.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(3);
  });

  it('deletes a running pod gracefully: terminating until its kubelet finishes', async () => {
    const node = fake.kubelet.addNode();
    await api.createNamespacedPod({
      namespace: NS,
      body: pod('p', {}, { spec: { nodeName: node.metadata.name, containers: [{ name: 'm', image: 'i' }] } }),
    });
    fake.kubelet.startPods();
    await api.deleteNamespacedPod({ name: 'p', namespace: NS, gracePeriodSeconds: 60 });
    const terminating = await api.readNamespacedPod({ name: 'p', namespace: NS });
    expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(60);
    expect(terminating.metadata?.deletionTimestamp).toBeDefined();
    expect(fake.kubelet.finishTermination()).toBe(1);
    expect((await failure(api.readNamespacedPod({ name: 'p', namespace: NS }))).code).toBe(404);
  });

  it('garbage-collects dependents when their owner is deleted', async () => {
    const svc = await api.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 'owner' }, spec: { clusterIP: 'None' } },
    });
    const ref = {
      apiVersion: 'v1',
      kind: 'Service',
      name: 'owner',
      uid: svc.metadata!.uid!,
      controller: true,
    };
    await api.createNamespacedPod({
      namespace: NS,
      body: pod('dep', {}, { metadata: { name: 'dep', ownerReferences: [ref] } }),
    });
    await api.createNamespacedPod({ namespace: NS, body: pod('free', {}) });
    await api.deleteNamespacedService({ name: 'owner', namespace: NS });
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['free']);
  });

  it('409 Conflict on a stale resourceVersion; merge patch cordons a node', async () => {
    const svc = await api.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 's', labels: { v: '1' } }, spec: {} },
    });
    await api.replaceNamespacedService({
      name: 's',
      namespace: NS,
      body: { ...svc, metadata: { ...svc.metadata, labels: { v: '2' } } },
    });
    const stale = await failure(
      api.replaceNamespacedService({
        name: 's',
        namespace: NS,
        body: { ...svc, metadata: { ...svc.metadata, labels: { v: '3' } } },
      }),
    );
    expect(stale.code).toBe(409);
    const node = fake.kubelet.addNode();
    await api.patchNode(
      { name: node.metadata.name, body: { spec: { unschedulable: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(fake.nodes()[0]?.spec.unschedulable).toBe(true);
    expect(fake.nodes()[0]?.spec.providerID).toBe(node.spec.providerID);
  });

  it('watches resume from a resourceVersion, and a compacted one gets 410 Expired', async () => {
    await api.createNamespacedPod({ namespace: NS, body: pod('one', { w: 'yes' }) });
    const list = await api.listNamespacedPod({ namespace: NS, labelSelector: 'w=yes' });
    await api.createNamespacedPod({ namespace: NS, body: pod('two', { w: 'yes' }) });
    await api.createNamespacedPod({ namespace: NS, body: pod('other', { w: 'no' }) });
    await api.deleteNamespacedPod({ name: 'two', namespace: NS });
    const resumed = await watchUntil(
      fake,
      { resourceVersion: list.metadata!.resourceVersion!, labelSelector: 'w=yes' },
      (e) => e.length >= 2,
    );
    expect(resumed.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED two', 'DELETED two']);

    fake.store.compact();
    const expired = await watchUntil(
      fake,
      { resourceVersion: list.metadata!.resourceVersion! },
      (e) => e.length >= 1,
    );
    expect(expired).toEqual([{ type: 'ERROR', name: undefined, code: 410 }]);
  });

  it('serves secrets: create (stringData as base64 data), get, list, delete; immutable data; collected with their owner', async () => {
    const svc = await api.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 'o' }, spec: {} },
    });
    const ref = { apiVersion: 'v1', kind: 'Service', name: 'o', uid: svc.metadata!.uid!, controller: true };
    const body = {
      metadata: { name: 's', labels: { app: 'x' }, ownerReferences: [ref] },
      immutable: true,
      stringData: { token: 'tok' },
    };
    const created = await api.createNamespacedSecret({ namespace: NS, body });
    expect(created).toMatchObject({ type: 'Opaque', data: { token: Buffer.from('tok').toString('base64') } });
    expect(created.stringData).toBeUndefined();
    expect((await failure(api.createNamespacedSecret({ namespace: NS, body }))).code).toBe(409);
    expect((await api.readNamespacedSecret({ name: 's', namespace: NS })).data).toEqual(created.data);
    const listed = await api.listNamespacedSecret({ namespace: NS, labelSelector: 'app=x' });
    expect(listed.items.map((s) => s.metadata?.name)).toEqual(['s']);
    const changed = { ...created, data: { token: Buffer.from('new').toString('base64') } };
    expect(
      (await failure(api.replaceNamespacedSecret({ name: 's', namespace: NS, body: changed }))).code,
    ).toBe(422);
    const notBase64 = { metadata: { name: 'bad' }, data: { token: 'not base64!' } };
    expect((await failure(api.createNamespacedSecret({ namespace: NS, body: notBase64 }))).code).toBe(422);
    await api.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'free' } } });
    await api.deleteNamespacedSecret({ name: 'free', namespace: NS });
    await api.deleteNamespacedService({ name: 'o', namespace: NS });
    expect(fake.secrets(NS)).toEqual([]);
  });

  it('the kubelet reads env secretKeyRefs; a missing Secret or key is CreateContainerConfigError until it exists', async () => {
    const node = fake.kubelet.addNode().metadata.name;
    const fromSecret = (name: string, key: string) => ({ valueFrom: { secretKeyRef: { name, key } } });
    const container = (ref: { name: string; key: string }) => ({
      name: 'm',
      image: 'i',
      env: [
        { name: 'PLAIN', value: 'p' },
        { name: 'TOKEN', ...fromSecret(ref.name, ref.key) },
      ],
    });
    const waiting = async (name: string) =>
      (await api.readNamespacedPod({ name, namespace: NS })).status?.containerStatuses?.[0]?.state?.waiting;
    await api.createNamespacedPod({
      namespace: NS,
      body: pod(
        'no-secret',
        {},
        { spec: { nodeName: node, containers: [container({ name: 's', key: 'token' })] } },
      ),
    });
    await api.createNamespacedPod({
      namespace: NS,
      body: pod(
        'no-key',
        {},
        { spec: { nodeName: node, containers: [container({ name: 's', key: 'other' })] } },
      ),
    });
    expect(fake.kubelet.startPods()).toEqual([]);
    expect(await waiting('no-secret')).toEqual({
      reason: 'CreateContainerConfigError',
      message: 'secret "s" not found',
    });
    await api.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 's' }, stringData: { token: 't0k' } },
    });
    expect(fake.kubelet.startPods()).toEqual(['no-secret']);
    expect(fake.kubelet.environment('no-secret')).toEqual({ PLAIN: 'p', TOKEN: 't0k' });
    expect(await waiting('no-key')).toEqual({
      reason: 'CreateContainerConfigError',
      message: `couldn't find key other in Secret ${NS}/s`,
    });
    expect((await api.readNamespacedPod({ name: 'no-key', namespace: NS })).status?.phase).toBe('Pending');
  });

  it('a kubelet that starts pods by itself starts one waiting on its Secret once the Secret is created', async () => {
    const auto = await startFakeKubeApi({ kubelet: { autoStartMs: 0 } });
    try {
      const client = auto.kubeConfig(NS).makeApiClient(CoreV1Api);
      const node = auto.kubelet.addNode().metadata.name;
      const env = [{ name: 'T', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }];
      await client.createNamespacedPod({
        namespace: NS,
        body: pod('p', {}, { spec: { nodeName: node, containers: [{ name: 'm', image: 'i', env }] } }),
      });
      const phase = async () => (await client.readNamespacedPod({ name: 'p', namespace: NS })).status;
      await vi.waitFor(
        async () =>
          expect((await phase())?.containerStatuses?.[0]?.state?.waiting?.reason).toBe(
            'CreateContainerConfigError',
          ),
        { timeout: 20_000 },
      );
      await client.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 's' }, stringData: { k: 'v' } },
      });
      await vi.waitFor(async () => expect((await phase())?.phase).toBe('Running'), { timeout: 20_000 });
      expect(auto.kubelet.environment('p')).toEqual({ T: 'v' });
    } finally {
      await auto.close();
    }
  });

  it('serves networking.k8s.io/v1 network policies: create (409 on a duplicate), get, list, watch, delete; collected with their owner', async () => {
    const net = fake.kubeConfig(NS).makeApiClient(NetworkingV1Api);
    const svc = await api.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: 'o' }, spec: {} },
    });
    const ref = { apiVersion: 'v1', kind: 'Service', name: 'o', uid: svc.metadata!.uid!, controller: true };
    const job = { matchLabels: { job: '1' } };
    const body = {
      metadata: { name: 'np', labels: { app: 'x' }, ownerReferences: [ref] },
      spec: { podSelector: job, ingress: [{ _from: [{ podSelector: job }] }] },
    };
    const created = await net.createNamespacedNetworkPolicy({ namespace: NS, body });
    // Group and version are the policy's; policyTypes defaulted as the real server does.
    expect(created).toMatchObject({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' });
    expect(created.spec?.policyTypes).toEqual(['Ingress']);
    expect(fake.networkPolicies(NS)[0]?.spec.ingress).toEqual([{ from: [{ podSelector: job }] }]);
    expect((await failure(net.createNamespacedNetworkPolicy({ namespace: NS, body }))).code).toBe(409);
    expect((await net.readNamespacedNetworkPolicy({ name: 'np', namespace: NS })).metadata?.uid).toBe(
      created.metadata?.uid,
    );
    const listed = await net.listNamespacedNetworkPolicy({ namespace: NS, labelSelector: 'app=x' });
    expect(listed.items.map((p) => p.metadata?.name)).toEqual(['np']);
    const invalid = { metadata: { name: 'bad' }, spec: { podSelector: {}, policyTypes: ['Sideways'] } };
    expect((await failure(net.createNamespacedNetworkPolicy({ namespace: NS, body: invalid }))).code).toBe(
      422,
    );
    // Only under its own group: not under /api/v1, as on a real server.
    const res = await fetch(`${fake.url}/api/v1/namespaces/${NS}/networkpolicies`);
    expect(res.status).toBe(404);

    const events: string[] = [];
    const stream = await new Watch(fake.kubeConfig()).watch(
      `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`,
      { resourceVersion: listed.metadata!.resourceVersion! },
      (type, obj) => events.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    await net.createNamespacedNetworkPolicy({
      namespace: NS,
      body: { metadata: { name: 'free' }, spec: { podSelector: {} } },
    });
    await net.deleteNamespacedNetworkPolicy({ name: 'free', namespace: NS });
    await api.deleteNamespacedService({ name: 'o', namespace: NS });
    expect(fake.networkPolicies(NS)).toEqual([]);
    await vi.waitFor(() => expect(events).toEqual(['ADDED free', 'DELETED free', 'DELETED np']), {
      timeout: 20_000,
    });
    stream.abort();
  });

  it('connectionAllowed reads policies as an enforcing CNI would', () => {
    const policy = (name: string, spec: object) =>
      ({ metadata: { name, namespace: NS }, spec }) as unknown as KubeObject;
    const pod = (labels: Record<string, string>, namespace = NS) => ({ namespace, labels });
    const [a1, a2, b1] = [pod({ job: 'a' }), pod({ job: 'a' }), pod({ job: 'b' })];
    // No policy: everything connects.
    expect(connectionAllowed([], b1, a1)).toBe(true);
    const denyAll = policy('deny', { podSelector: {}, policyTypes: ['Ingress'] });
    const onlyA = policy('a', {
      podSelector: { matchLabels: { job: 'a' } },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [{ podSelector: { matchExpressions: [{ key: 'job', operator: 'In', values: ['a'] }] } }] },
      ],
    });
    expect(connectionAllowed([denyAll], a2, a1)).toBe(false);
    expect(connectionAllowed([denyAll, onlyA], a2, a1)).toBe(true);
    expect(connectionAllowed([denyAll, onlyA], b1, a1)).toBe(false);
    expect(connectionAllowed([denyAll, onlyA], a1, b1)).toBe(false);
    // A podSelector alone means the policy's namespace: the same labels elsewhere do not match.
    expect(connectionAllowed([denyAll, onlyA], pod({ job: 'a' }, 'other'), a1)).toBe(false);
    const fromOther = policy('ns', {
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [
        { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } } }] },
      ],
    });
    expect(connectionAllowed([fromOther], pod({}, 'other'), b1)).toBe(true);
    // Egress counts too: the sender's policies must let it out.
    const noEgress = policy('out', { podSelector: { matchLabels: { job: 'b' } }, policyTypes: ['Egress'] });
    expect(connectionAllowed([noEgress], b1, a1)).toBe(false);
    expect(connectionAllowed([noEgress], a1, b1)).toBe(true);
  });

  it('injected faults fail the next requests, then the server answers again', async () => {
    fake.faults.inject({ status: 429, count: 2, retryAfterSeconds: 1 });
    expect((await failure(api.listNamespacedPod({ namespace: NS }))).code).toBe(429);
    expect((await failure(api.listNamespacedPod({ namespace: NS }))).code).toBe(429);
    expect((await api.listNamespacedPod({ namespace: NS })).items).toEqual([]);
    expect(fake.faults.injected).toBe(2);
  });

  it('an applied fault makes the write, then answers with its status or not at all', async () => {
    fake.faults.inject({ status: 503, applied: true, match: (r) => r.method === 'POST' });
    expect((await failure(api.createNamespacedPod({ namespace: NS, body: pod('a', {}) }))).code).toBe(503);
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['a']);
    // The retry meets the pod its lost answer made.
    const again = await failure(api.createNamespacedPod({ namespace: NS, body: pod('a', {}) }));
    expect([again.code, JSON.parse(again.body as string).reason]).toEqual([409, 'AlreadyExists']);
    // An error it would have answered is lost as well.
    fake.faults.inject({ status: 500, applied: true, match: (r) => r.method === 'POST' });
    expect((await failure(api.createNamespacedPod({ namespace: NS, body: pod('a', {}) }))).code).toBe(500);

    fake.faults.inject({ timeout: true, applied: true, match: (r) => r.method === 'DELETE' });
    // Left hanging: the server's close ends it.
    void api.deleteNamespacedPod({ name: 'a', namespace: NS }).catch(() => undefined);
    await vi.waitFor(() => expect(fake.pods(NS)).toEqual([]), { timeout: 20_000 });
    expect(fake.faults.pending()).toBe(0);
    expect(fake.requests.filter((r) => r.method === 'DELETE')).toEqual([]); // never answered
    // Without `applied`, a status or timeout fault makes nothing.
    fake.faults.inject({ status: 503, match: (r) => r.method === 'POST' });
    await failure(api.createNamespacedPod({ namespace: NS, body: pod('b', {}) }));
    expect(fake.pods(NS)).toEqual([]);
    expect(() => fake.faults.inject({ applied: true, after: Promise.resolve() })).toThrow(/applied/);
  });
});
