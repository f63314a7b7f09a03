/**
 * The queue for the budget in the running service (config queueOrder, src/service/budget-widths.ts):
 * when the budget cannot run every job submitted, the one with the least expected work left starts
 * first by default, and in submission order with `queueOrder: submitted`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { workLeftSeconds } from '../../src/core/work-left.ts';
import { startService } from './harness.ts';
import { QUEUE_CONFIG, queueMixedLongJobs } from './budget-queue-load.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** Six imagenet jobs (days of work each), then one ncf job (a minute), at a budget of one node. */
async function sixLongThenOneShort(config: Record<string, unknown> = {}) {
  const s = await startService({
    config: { leaseSeconds: 86_400, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, ...config },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
  await s.service.planner.idle();
  const long: number[] = [];
  for (let i = 0; i < 6; i++) long.push((await s.request('POST', '/v1/jobs', { class: 'imagenet' })).body.id);
  const short = (await s.request('POST', '/v1/jobs', { class: 'ncf' })).body.id as number;
  await s.ticks(2);
  const job = async (id: number) => (await s.request('GET', `/v1/jobs/${id}`)).body;
  return { s, long, short, job };
}

describe('the queue for the budget', () => {
  it('starts the job with the least work left first, passing older ones, and says the order', async () => {
    const { s, long, short, job } = await sixLongThenOneShort();
    expect((await job(short)).state).toBe('running');
    const waiting = [];
    for (const id of long) if ((await job(id)).state === 'waiting') waiting.push(id);
    // Some of the older imagenet jobs wait for the budget behind it.
    expect(waiting.length).toBeGreaterThan(0);
    expect((await job(waiting[0]!)).waitingFor).toBe('budget');
    expect((await s.request('GET', '/v1/budget')).body.control.queueOrder).toBe('least-work-left');
  });

  it('keeps submission order with queueOrder: submitted', async () => {
    const { s, short, job } = await sixLongThenOneShort({ queueOrder: 'submitted' });
    const shortJob = await job(short);
    expect(shortJob.state).toBe('waiting');
    expect(shortJob.waitingFor).toBe('budget');
    expect((await s.request('GET', '/v1/budget')).body.control.queueOrder).toBe('submitted');
  });

  it("says each queued job's place in line, and GET /v1/jobs?order=queue lists them in it", async () => {
    // Long jobs of three classes, mixed, so the least-work-left order is not the submission order.
    const s = await startService({ config: QUEUE_CONFIG });
    cleanups.push(s.close);
    await queueMixedLongJobs(s);
    const queue = (await s.request('GET', '/v1/jobs?order=queue')).body.jobs as Array<{
      id: number;
      class: string;
      queuePlace: number;
      waitingFor: string;
    }>;
    expect(queue.length).toBeGreaterThan(1);
    expect(queue.map((j) => j.queuePlace)).toEqual(queue.map((_, i) => i + 1));
    expect(new Set(queue.map((j) => j.waitingFor))).toEqual(new Set(['budget']));
    // The order the ceiling serves: least expected work left first (none has done any yet).
    const left = queue.map((j) => workLeftSeconds(s.service.state.classes.get(j.class)?.profile, 0, 0)!);
    expect(left).toEqual([...left].sort((a, b) => a - b));
    expect(new Set(queue.map((j) => j.class)).size).toBeGreaterThan(1);
    // One job's own view says the same place; a running one has none.
    for (const queued of queue)
      expect((await s.request('GET', `/v1/jobs/${queued.id}`)).body.queuePlace).toBe(queued.queuePlace);
    const running = (await s.request('GET', '/v1/jobs?state=running')).body.jobs;
    expect(running.length).toBeGreaterThan(0);
    for (const job of running) expect(job.queuePlace).toBeNull();
    // The first two of the queue, and of one class.
    const firstTwo = (await s.request('GET', '/v1/jobs?order=queue&limit=2')).body.jobs;
    expect(firstTwo.map((j: { id: number }) => j.id)).toEqual(queue.slice(0, 2).map((j) => j.id));
    const ofClass = queue[0]!.class;
    const byClass = (await s.request('GET', `/v1/jobs?order=queue&class=${ofClass}`)).body.jobs;
    expect(byClass.map((j: { id: number }) => j.id)).toEqual(
      queue.filter((j) => j.class === ofClass).map((j) => j.id),
    );
  });

  it('numbers the queue in submission order with queueOrder: submitted', async () => {
    const { s, long, short } = await sixLongThenOneShort({ queueOrder: 'submitted' });
    const queue = (await s.request('GET', '/v1/jobs?order=queue')).body.jobs as Array<{ id: number }>;
    const ids = queue.map((j) => j.id);
    expect(ids.length).toBeGreaterThan(1);
    expect(ids.at(-1)).toBe(short);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.every((id) => id === short || long.includes(id))).toBe(true);
  });

  it('refuses order=queue with before, or with states that leave out waiting', async () => {
    const s = await startService();
    cleanups.push(s.close);
    const paged = await s.request('GET', '/v1/jobs?order=queue&before=5');
    expect(paged.status).toBe(400);
    expect(paged.body.error.message).toContain('cannot be given with order=queue');
    const running = await s.request('GET', '/v1/jobs?order=queue&state=running');
    expect(running.status).toBe(400);
    expect(running.body.error.message).toBe(
      'order=queue lists waiting jobs (those queued for the budget); state must include waiting or be left out, got "running"',
    );
    expect((await s.request('GET', '/v1/jobs?order=queue&state=waiting')).status).toBe(200);
  });
});
