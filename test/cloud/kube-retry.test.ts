import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreApi } from '../../src/cloud/kubernetes/client.ts';
import { KubeCallError, withKubeRetry } from '../../src/cloud/kubernetes/retry.ts';
import type { RetryContext } from '../../src/cloud/retry.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * boa's one retry layer on Kubernetes calls, through the real @kubernetes/client-node against the fake
 * API server: each kind of failure is retried a bounded number of times, or not at all, counted in the
 * requests the server answered.
 */
const NS = 'default';
const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 };

describe('withKubeRetry against the fake API server', () => {
  let fake: FakeKubeApi;
  let api: CoreV1Api;
  let ctx: RetryContext & { sleeps: number[] };

  const service = (name: string): V1Service => ({
    metadata: { name, labels: { app: 'boa-test' } },
    spec: { clusterIP: 'None', ports: [{ port: 29500 }] },
  });
  const requests = (method: string, path: string) =>
    fake.requests.filter((r) => r.method === method && r.path.endsWith(path) && !r.watch);

  beforeEach(async () => {
    fake = await startFakeKubeApi();
    api = coreApi(fake.kubeConfig(NS), 1_000);
    const time = fakeTime();
    ctx = { sleep: time.sleep, random: () => 0, logger: captureLogs().logger, policy, sleeps: time.sleeps };
    await api.createNamespacedService({ namespace: NS, body: service('svc') });
  });
  afterEach(async () => {
    await fake.close();
  });

  const read = () => api.readNamespacedService({ name: 'svc', namespace: NS });

  it('retries throttling (429) a bounded number of times, honouring Retry-After up to the cap', async () => {
    fake.faults.inject({ status: 429, count: 10, retryAfterSeconds: 5, match: (r) => r.method === 'GET' });
    const run = withKubeRetry('read service', read, ctx);
    await expect(run).rejects.toMatchObject({ name: 'KubeCallError', kind: 'throttling', attempts: 3 });
    expect(requests('GET', '/services/svc')).toHaveLength(3);
    // Retry-After (5 s) is longer than the backoff, so the cap (1 s) is waited.
    expect(ctx.sleeps).toEqual([1_000, 1_000]);
  });

  it('retries a request that timed out, and stops after maxAttempts', async () => {
    fake.faults.inject({ timeout: true, count: 1, match: (r) => r.method === 'GET' });
    const svc = await withKubeRetry('read service', read, ctx);
    expect(svc.metadata?.name).toBe('svc');
    // The timed-out request is never answered (so not in fake.requests): its fault was used up.
    expect(fake.faults.pending()).toBe(0);

    fake.faults.inject({ timeout: true, count: 5, match: (r) => r.method === 'GET' });
    await expect(withKubeRetry('read service', read, ctx)).rejects.toMatchObject({
      kind: 'transient',
      attempts: 3,
    });
    expect(fake.faults.pending()).toBe(2);
  });

  it('a conflict (409, stale resourceVersion) is retried by re-reading and re-applying', async () => {
    let attempt = 0;
    const relabel = async () => {
      const current = await read();
      if (++attempt === 1) {
        // Someone else changes the object between our read and our write: our PUT is stale.
        const theirs = await read();
        theirs.metadata!.annotations = { other: 'writer' };
        await api.replaceNamespacedService({ name: 'svc', namespace: NS, body: theirs });
      }
      current.metadata!.labels = { ...current.metadata!.labels, relabelled: 'yes' };
      return api.replaceNamespacedService({ name: 'svc', namespace: NS, body: current });
    };
    const updated = await withKubeRetry('relabel service', relabel, ctx);
    expect(attempt).toBe(2);
    const puts = requests('PUT', '/services/svc');
    expect(puts.map((r) => r.status)).toEqual([200, 409, 200]);
    // Both writes survive: ours was re-applied on the other writer's version.
    expect(updated.metadata?.labels?.relabelled).toBe('yes');
    expect(updated.metadata?.annotations?.other).toBe('writer');
  });

  it("retries a 401 (boa's token not accepted for a moment) as boundedly as a transient error", async () => {
    fake.faults.inject({ status: 401, reason: 'Unauthorized', count: 1, match: (r) => r.method === 'GET' });
    expect((await withKubeRetry('read service', read, ctx)).metadata?.name).toBe('svc');
    fake.faults.inject({ status: 401, reason: 'Unauthorized', count: 5, match: (r) => r.method === 'GET' });
    await expect(withKubeRetry('read service', read, ctx)).rejects.toMatchObject({
      kind: 'unauthorized',
      attempts: 3,
    });
    expect(requests('GET', '/services/svc').map((r) => r.status)).toEqual([401, 200, 401, 401, 401]);
  });

  it("tells an RBAC 403 (boa's permissions) from a quota's or admission's 403 (the object), retrying neither", async () => {
    const forbidden = (message: string) =>
      fake.faults.inject({ status: 403, reason: 'Forbidden', message, match: (r) => r.method === 'GET' });
    forbidden(
      'services "svc" is forbidden: User "system:serviceaccount:boa:boa" cannot get resource "services" in API group "" in the namespace "default"',
    );
    await expect(withKubeRetry('read service', read, ctx)).rejects.toMatchObject({
      kind: 'forbidden',
      attempts: 1,
    });
    forbidden(
      'services "svc" is forbidden: exceeded quota: objects, requested: services=1, used: services=5, limited: services=5',
    );
    await expect(withKubeRetry('read service', read, ctx)).rejects.toMatchObject({
      kind: 'quota',
      attempts: 1,
    });
    expect(requests('GET', '/services/svc')).toHaveLength(2);
  });

  it('does not retry a refusal (422 Invalid) or a NotFound: one request, the kind kept', async () => {
    const posts = requests('POST', '/services').length;
    const refused = withKubeRetry(
      'create service',
      () => api.createNamespacedService({ namespace: NS, body: service('Not_A_Valid_Name') }),
      ctx,
    );
    await expect(refused).rejects.toBeInstanceOf(KubeCallError);
    await expect(refused).rejects.toMatchObject({ kind: 'refused', attempts: 1 });
    expect(requests('POST', '/services')).toHaveLength(posts + 1);

    const missing = withKubeRetry(
      'read service',
      () => api.readNamespacedService({ name: 'gone', namespace: NS }),
      ctx,
    );
    await expect(missing).rejects.toMatchObject({ kind: 'not-found', attempts: 1 });
    expect(requests('GET', '/services/gone')).toHaveLength(1);
    expect(ctx.sleeps).toEqual([]);
  });
});
