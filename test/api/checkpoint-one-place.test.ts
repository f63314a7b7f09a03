/**
 * A workload's checkpoint is a volume claim or a URI, not both (`boa jobs submit [--checkpoint URI |
 * --checkpoint-claim PVC]`): with both, a pod got BOA_CHECKPOINT_DIR=/checkpoint and the URI was dropped
 * without a word.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/service/ports.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0)) await close();
});

/** Kubernetes' kind, accepting every workload and running nothing: the claim is not read here. */
const idleExecutor: Executor = { kind: 'kubernetes', reconcile: async () => [], close: async () => {} };

describe('a workload checkpoint', () => {
  it('is refused naming both when it gives a volume claim and a uri, and stores no job', async () => {
    const s = await startService({ executor: idleExecutor });
    cleanups.push(s.close);
    const both = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: ['true'], checkpoint: { volumeClaim: 'ckpt', uri: 's3://bucket/run' } },
    });
    expect(both.status, JSON.stringify(both.body)).toBe(400);
    expect(both.body.error.code).toBe('invalid');
    expect(both.body.error).toMatchObject({ field: 'workload.checkpoint' });
    expect(both.body.error.message).toMatch(/give volumeClaim or uri, not both/);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
    const one = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: ['true'], checkpoint: { uri: 's3://bucket/run' } },
    });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
  });
});
