/**
 * The listing a node pass takes after a raise (so status counts launched nodes at once) must never
 * replace a newer one: a pass's listing that answers after the next tick listed the pool left status
 * reading the older nodes until the tick after (found in review: 1 ready node listed by the tick, 0 after).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PoolNode, ResizeResult } from '../../src/service/ports.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('the listing after a raise', () => {
  it('is dropped when a tick listed the pool while it was on its way', async () => {
    const s = await startService({
      config: { priorRates: { cifar10: 8 }, local: { maxNodes: 16, bootSeconds: 90, releaseSeconds: 30 } },
    });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 12 });
    await s.service.planner.idle();
    await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    const pool = s.service.deps.pool;
    const list = pool.listNodes.bind(pool);
    const send = pool.setDesiredSize.bind(pool);
    // The first listing after the raise answers only when released: a slow cloud call.
    let holdNext = false;
    let release: (() => void) | undefined;
    pool.setDesiredSize = async (n: number): Promise<ResizeResult> => {
      const result = await send(n);
      holdNext = true;
      return result;
    };
    pool.listNodes = async (): Promise<PoolNode[]> => {
      const nodes = await list();
      if (!holdNext) return nodes;
      holdNext = false;
      return new Promise((resolve) => (release = () => resolve(nodes)));
    };
    await s.scheduler.tick(); // asks for nodes; the pass's listing is held
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(release).toBeDefined();
    s.clock.advance(120); // booted
    await s.scheduler.tick(); // lists them ready
    const listedByTick = s.service.state.nodes.filter((n) => n.ready).length;
    expect(listedByTick).toBeGreaterThan(0);
    release?.();
    await s.scheduler.settle();
    expect(s.service.state.nodes.filter((n) => n.ready).length).toBe(listedByTick);
    expect((await s.request('GET', '/v1/status')).body.nodeGroup.readyNodes).toBe(listedByTick);
  });
});
