/**
 * The queue for the budget in the running service (config queueOrder, src/service/budget-widths.ts):
 * when the budget cannot run every job submitted, the one with the least expected work left starts
 * first by default, and in submission order with `queueOrder: submitted`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

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
});
