/**
 * The probes as Kubernetes reads them (found in an SRE trial): /readyz answered 200 for ever once one
 * tick had run, though every tick since failed (a store that cannot be written), and /healthz answered
 * 200 while a tick hung on a call that never returned, the loop starting no other: boa stopped
 * scheduling and nothing restarted it or took it out of service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
});

async function started(tickSeconds = 60) {
  const boa = await startService({ config: { tickSeconds, budget: 40 } });
  closes.push(boa.close);
  await boa.service.planner.idle();
  return boa;
}

describe('/readyz', () => {
  it('turns 503 once no tick has succeeded for three intervals, and 200 again at the next one that does', async () => {
    const boa = await started();
    await boa.ticks(1);
    expect((await boa.request('GET', '/readyz', undefined, null)).status).toBe(200);

    const setLastTick = boa.repo.setLastTick.bind(boa.repo);
    boa.repo.setLastTick = () => {
      throw new Error('SQLITE_READONLY: attempt to write a readonly database');
    };
    // ticks(1) moved the clock one interval on from the last good tick; two failed ones make three.
    for (let i = 0; i < 2; i++) {
      await expect(boa.scheduler.tick()).rejects.toThrow('SQLITE_READONLY');
      await boa.scheduler.settle();
      boa.clock.advance(60);
    }
    // Three intervals (180 s) since the last good tick: still within them.
    expect((await boa.request('GET', '/readyz', undefined, null)).status).toBe(200);
    await expect(boa.scheduler.tick()).rejects.toThrow('SQLITE_READONLY');
    boa.clock.advance(60);
    const stale = await boa.request('GET', '/readyz', undefined, null);
    expect(stale.status).toBe(503);
    expect(stale.body.ready).toBe(false);
    expect(stale.body.reason).toMatch(
      /no scheduling tick has succeeded for 240 s \(one every 60 s expected\)/,
    );
    // The unauthenticated probe does not repeat the error's text: the log has it.
    expect(JSON.stringify(stale.body)).not.toContain('SQLITE');
    // Failing fast is no reason to restart: liveness stays up.
    expect((await boa.request('GET', '/healthz', undefined, null)).status).toBe(200);

    boa.repo.setLastTick = setLastTick;
    await boa.ticks(1);
    expect((await boa.request('GET', '/readyz', undefined, null)).status).toBe(200);
  });

  it('is 503 before the first tick', async () => {
    const boa = await started();
    const res = await boa.request('GET', '/readyz', undefined, null);
    expect(res).toMatchObject({ status: 503, body: { ready: false, lastTickAt: null } });
  });
});

describe('/healthz', () => {
  it('turns 503 once a tick has run for more than 10 minutes (a call that never returns), 200 when it ends', async () => {
    const boa = await started();
    await boa.ticks(1);
    let answer: (nodes: never[]) => void = () => {};
    const listNodes = boa.pool.listNodes.bind(boa.pool);
    boa.pool.listNodes = () => new Promise((resolve) => (answer = resolve));
    const hung = boa.scheduler.tick();
    boa.clock.advance(9 * 60);
    expect((await boa.request('GET', '/healthz', undefined, null)).status).toBe(200);
    boa.clock.advance(2 * 60);
    const res = await boa.request('GET', '/healthz', undefined, null);
    expect(res.status).toBe(503);
    expect(res.body.reason).toMatch(/has run 660 s: the scheduler is hung/);
    expect((await boa.request('GET', '/readyz', undefined, null)).status).toBe(503);

    boa.pool.listNodes = listNodes;
    answer([]);
    await hung;
    await boa.scheduler.settle();
    expect((await boa.request('GET', '/healthz', undefined, null)).status).toBe(200);
    expect((await boa.request('GET', '/readyz', undefined, null)).status).toBe(200);
  });

  it('counts a tick hung after 10 minutes at a 120 s tick too, within what the startup probe gives a first tick', async () => {
    // Found in review: 10 ticks at 120 s (20 minutes) was past the startup probe's 15 for boot and the
    // first tick, so a tick liveness waited for was cut short at every start, and boa restarted in a loop.
    const boa = await started(120);
    await boa.ticks(1);
    let answer: (nodes: never[]) => void = () => {};
    const listNodes = boa.pool.listNodes.bind(boa.pool);
    boa.pool.listNodes = () => new Promise((resolve) => (answer = resolve));
    const hung = boa.scheduler.tick();
    boa.clock.advance(11 * 60);
    const res = await boa.request('GET', '/healthz', undefined, null);
    expect(res.status).toBe(503);
    expect(res.body.reason).toMatch(/has run 660 s: the scheduler is hung/);

    boa.pool.listNodes = listNodes;
    answer([]);
    await hung;
    await boa.scheduler.settle();
  });
});
