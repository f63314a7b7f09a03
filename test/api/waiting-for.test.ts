/**
 * Why a waiting job waits, as the job view says it: a plan, the budget, the next tick (no tick has
 * seen it yet, whatever the nodes), nodes to boot, or, with none coming, GPUs the running jobs hold.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const waitingFor = async (s: Booted, id: number) =>
  (await s.request('GET', `/v1/jobs/${id}`)).body.waitingFor;

describe('waitingFor', () => {
  it('is the next tick for a job submitted since the last one, then nodes while they boot', async () => {
    boa = await startService();
    const s = boa;
    const early = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    expect(early.job.waitingFor).toBe('plan');
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.service.planner.idle();
    // A plan in force, the job not given its widths yet: it waits for the tick, not for a budget.
    expect(s.service.state.plan).toBeDefined();
    expect(await waitingFor(s, early.id)).toBe('tick');
    await s.ticks(1);
    // Planned and placed, its nodes asked for: it waits for them to boot.
    expect(await waitingFor(s, early.id)).toBe('nodes');
    const states: string[] = [];
    for (let i = 0; i < 10 && states.at(-1) !== 'running'; i++) {
      await s.ticks(1);
      states.push((await s.request('GET', `/v1/jobs/${early.id}`)).body.state);
    }
    expect(states.at(-1)).toBe('running');

    // Nodes up: a job submitted now waits for the next tick, which places it (on new nodes if it
    // needs them: then it waits for those).
    const late = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    expect(late.job.waitingFor).toBe('tick');
    expect(await waitingFor(s, late.id)).toBe('tick');
    await s.ticks(1);
    const placed = (await s.request('GET', `/v1/jobs/${late.id}`)).body;
    expect([placed.state, placed.waitingFor]).toEqual(
      placed.state === 'running' ? ['running', null] : ['waiting', 'nodes'],
    );
  });

  it('is GPUs, not nodes, once the group is at its maximum with every node ready and full', async () => {
    // One node of 4 GPUs at most, booting at once: six jobs cannot all run on it.
    boa = await startService({ config: { local: { maxNodes: 1, bootSeconds: 0, releaseSeconds: 0 } } });
    const s = boa;
    // A budget above the group's 4 GPUs: the group's maximum holds the jobs back, not the budget.
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id);
    await s.ticks(3);
    const jobs = await Promise.all(ids.map(async (id) => (await s.request('GET', `/v1/jobs/${id}`)).body));
    const waiting = jobs.filter((job) => job.state === 'waiting');
    expect(jobs.some((job) => job.state === 'running')).toBe(true);
    expect(waiting.length).toBeGreaterThan(0);
    const nodes = s.service.state.nodes;
    expect(nodes.length).toBe(1);
    expect(nodes.every((node) => node.ready)).toBe(true);
    // "waits for nodes" read as if more were on their way (an operator trial).
    for (const job of waiting) expect(job.waitingFor).toBe('gpus');
    const listed = (await s.request('GET', '/v1/jobs?state=waiting')).body.jobs;
    expect(listed.map((job: { waitingFor: string }) => job.waitingFor)).toEqual(waiting.map(() => 'gpus'));
  });
});
