/**
 * A stopping pod whose kubelet does not answer (its node died or is cut off): the API server holds a
 * log request until its dial to the kubelet times out, or for ever if the kubelet accepts and never
 * answers. Keeping the pod's log must not hold up its deletion, nor every later pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const logDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'boa-kube-dead-'));
  dirs.push(dir);
  return dir;
};
const job = (generation: number) =>
  jobOnNodes(7, generation, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
const pod = (name: string) => cluster.fake.pods(NS).find((p) => p.metadata.name === name);
const isFollow = (r: { path: string; query: URLSearchParams }): boolean =>
  r.path.endsWith('/log') && r.query.get('follow') === 'true';

describe("keeping a stopping pod's log when its kubelet does not answer", () => {
  it('a follow the server never answers ends after requestTimeoutMs, and the pod is deleted', async () => {
    const executor = cluster.executor({ requestTimeoutMs: 500 }, { logArchiveDir: logDir() });
    const first = podName(7, 1, 0);
    await reconcileUntil(executor, [job(1)], () => pod(first)?.status?.phase === 'Running', 'running');
    cluster.fake.faults.inject({ timeout: true, count: 100, match: isFollow });
    const pass = executor.reconcile([job(2)]);
    const result = await Promise.race([
      pass.then(() => 'returned'),
      new Promise((r) => setTimeout(() => r('hung'), 8000)),
    ]);
    expect(result).toBe('returned');
    expect(pod(first)?.metadata.deletionTimestamp).toBeTruthy();
    cluster.fake.faults.clear();
  }, 20_000);

  it('a follow that fails is tried twice, not at every pass while the pod stays Terminating', async () => {
    const executor = cluster.executor({}, { logArchiveDir: logDir() });
    const first = podName(7, 1, 0);
    await reconcileUntil(executor, [job(1)], () => pod(first)?.status?.phase === 'Running', 'running');
    const before = cluster.fake.faults.injected;
    cluster.fake.faults.inject({ status: 500, count: 1000, match: isFollow });
    for (let i = 0; i < 6; i++) await executor.reconcile([job(2)]);
    expect(pod(first)?.metadata.deletionTimestamp).toBeTruthy();
    const follows = cluster.fake.faults.injected - before;
    expect(follows).toBeGreaterThan(0);
    expect(follows).toBeLessThanOrEqual(2);
    cluster.fake.faults.clear();
  }, 30_000);
});
