import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ForeignGpuPods } from '../../src/cloud/aws/foreign-gpu-pods.ts';
import { KUBE_RETRY } from '../../src/cloud/kubernetes/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * The tick waits for this read. Found in review: over 64 nodes of an API server whose lists time out,
 * one list at a time through the retry layer (4 attempts, 10 s each, backoff) took 44 minutes of one tick.
 */
const NODES = Array.from({ length: 64 }, (_, i) => `n${i}`);

const notebook = (node: string) => ({
  metadata: { name: `nb-${node}`, namespace: 'research', uid: node, labels: {} },
  spec: { nodeName: node, containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': '1' } } }] },
});

function setup(list: (node: string) => Promise<{ items: object[] }>) {
  const time = fakeTime();
  const logs = captureLogs();
  let calls = 0;
  const api = {
    listPodForAllNamespaces: ({ fieldSelector }: { fieldSelector: string }) => {
      calls += 1;
      return list(/spec\.nodeName=([^,]+)/.exec(fieldSelector)![1]!);
    },
  };
  const retry = { sleep: time.sleep, random: () => 0.5, logger: logs.logger, policy: KUBE_RETRY };
  const foreign = new ForeignGpuPods(api as never, retry, logs.logger, time.clock);
  return { time, logs, foreign, calls: () => calls };
}

const timedOut = () =>
  Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });

describe('ForeignGpuPods: one read is bounded', () => {
  it('stops at the first failure: a few lists at once, no retries, not one list per node', async () => {
    const { time, foreign, calls, logs } = setup(async () => {
      time.advance(3_000); // the list's request timeout
      throw timedOut();
    });
    const start = time.clock.now();
    expect((await foreign.read(NODES)).size).toBe(0);
    expect(calls()).toBeLessThanOrEqual(8);
    expect(time.sleeps).toEqual([]);
    expect(time.clock.now() - start).toBeLessThan(30_000);
    expect(logs.lines.filter((l) => l.event === 'node.foreign-pods-partial')).toHaveLength(1);
  });

  it('starts no list after its budget; the nodes not read keep their last count', async () => {
    let slow = false;
    const listed = new Set<string>();
    const { time, foreign, calls } = setup(async (node) => {
      if (slow) {
        time.advance(1_000);
        listed.add(node);
      }
      return { items: [notebook(node)] };
    });
    expect((await foreign.read(NODES)).size).toBe(64);
    slow = true;
    const before = calls();
    const start = time.clock.now();
    const read = await foreign.read(NODES);
    expect(calls() - before).toBeLessThan(10);
    expect(time.clock.now() - start).toBeLessThan(15_000);
    expect(read.size).toBe(64);
    expect(read.get('n63')).toEqual({ gpus: 1, pods: ['research/nb-n63'] });
    // The next reads start where this one stopped: every node is listed in turn, not the first few only.
    for (let i = 0; i < 30; i++) await foreign.read(NODES);
    expect(listed.size).toBe(64);
  });

  it('a node never read counts none (fail open), logged once until read, with the fix for a 403', async () => {
    let answer: 'forbidden' | 'ok' = 'forbidden';
    const { foreign, logs } = setup(async (node) => {
      if (answer === 'ok') return { items: [notebook(node)] };
      const status = { message: 'pods is forbidden: User "boa" cannot list resource "pods" in API group ""' };
      throw new ApiException(403, 'Forbidden', JSON.stringify(status), {});
    });
    for (let i = 0; i < 3; i++) expect((await foreign.read(['n1'])).has('n1')).toBe(false);
    const unknown = () => logs.lines.filter((l) => l.event === 'node.foreign-pods-unknown');
    expect(unknown()).toHaveLength(1);
    expect(unknown()[0]).toMatchObject({ node: 'n1', fix: expect.stringMatching(/redeploy the stack/) });
    answer = 'ok';
    expect((await foreign.read(['n1'])).get('n1')?.gpus).toBe(1);
    answer = 'forbidden';
    expect((await foreign.read(['n1'])).get('n1')?.gpus).toBe(1); // its last count
    expect(unknown()).toHaveLength(2);
  });
});
