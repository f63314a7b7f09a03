/**
 * The service's execution over the Kubernetes executor (real client, fake API server) when the API
 * server stalls a watch. Reconciles are single-flight, so one that never ended would skip every later
 * one and hang the shutdown.
 */
import { pino } from 'pino';
import { afterEach, expect, it, vi } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))]);

it('a pods watch the API server never answers stops no later reconcile, nor the shutdown', async () => {
  const fake = await startFakeKubeApi();
  cleanups.push(() => fake.close());
  const executor = createKubernetesExecutor(
    { terminationGraceSeconds: 60, kubernetes: { namespace: 'boa-jobs', requestTimeoutMs: 300 } },
    pino({ level: 'silent' }),
    {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
      sleep: async () => undefined,
      random: () => 0.5,
    },
  );
  // The first watch of pods is accepted and never answered, whichever reconcile asks it.
  fake.faults.inject({ timeout: true, count: 1, match: (r) => r.watch && r.path.endsWith('/pods') });
  const s = await startService({ executor });
  let closed = false;
  cleanups.push(() => (closed ? undefined : s.close()));
  const { execution } = s.service;
  const before = execution.reconciles;
  execution.reconcile();
  expect(await within(execution.settle(), 20_000)).not.toBe('hung');
  // The watch is asked after the list, without being waited for: it is hanging from here on.
  await vi.waitFor(() => expect(fake.faults.pending()).toBe(0), { timeout: 20_000 });
  execution.reconcile();
  expect(await within(execution.settle(), 20_000)).not.toBe('hung');
  expect(execution.reconciles).toBe(before + 2);

  closed = true;
  expect(await within(s.close(), 20_000)).not.toBe('hung');
});
