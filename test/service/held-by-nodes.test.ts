/**
 * A job waiting for GPUs stopping replicas hold names the jobs holding them on the nodes where it would
 * fit once they end, not every job with replicas stopping anywhere.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { graceService } from './grace-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('heldBy', () => {
  it('names the jobs holding GPUs where the waiting job would fit', async () => {
    const { s, executor, tick, submit } = await graceService(cleanups, {
      maxNodes: 2,
      priorRates: { cifar10: 8, bert: 1 },
    });
    // a (4 GPUs) on a node of its own; c and d (2 each) share the other.
    const [a, c, d] = [await submit('bert'), await submit('cifar10'), await submit('cifar10')];
    for (let i = 0; i < 6 && ![a, c, d].every((id) => executor.nodesOf(id).length > 0); i++) await tick();
    const [aNode] = executor.nodesOf(a);
    expect(executor.nodesOf(a)).toEqual([aNode]);
    expect(executor.nodesOf(c)).toEqual(executor.nodesOf(d));
    expect(executor.nodesOf(c)).not.toEqual([aNode]);
    expect(s.service.job(a).allocation).toHaveLength(4);
    // Both a and c stop for their grace; b needs a whole node: only a's can give it one.
    for (const id of [a, c]) expect((await s.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    const b = await submit('bert');
    await tick();
    const seen = (await s.request('GET', `/v1/jobs/${b}`)).body;
    expect(seen.state).toBe('waiting');
    expect(seen.waitingFor).toBe('stopping');
    expect(seen.heldBy.jobs).toEqual([a]);
    expect(Number.isFinite(Date.parse(seen.heldBy.killAt))).toBe(true);
    expect(s.service.state.liveReplicas.some((r) => r.jobId === c)).toBe(true);
    // Listed by the API all the same, as stopping.
    const stopping = (await s.request('GET', '/v1/jobs?stopping=true')).body;
    expect(stopping.jobs.map((j: { id: number }) => j.id).sort()).toEqual([a, c].sort());
  });
});
