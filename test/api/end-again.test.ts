/**
 * docs/api.md, "Allocation, progress, complete and cancel": ending a job the way it already ended answers
 * it as it is, so a client retrying a cancel or complete whose answer it lost gets no error; ending it
 * the other way is 409 `already_finished`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0)) await close();
});

describe('a cancel or complete of a job already ended', () => {
  it('answers the job when it ended that way, and 409 already_finished when it ended otherwise', async () => {
    const s = await startService();
    cleanups.push(s.close);
    const cancelled = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    const done = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    expect((await s.request('POST', `/v1/jobs/${cancelled.id}/cancel`)).status).toBe(200);
    expect((await s.request('POST', `/v1/jobs/${done.id}/complete`, undefined, done.token)).status).toBe(200);

    const cancelAgain = await s.request('POST', `/v1/jobs/${cancelled.id}/cancel`);
    expect(cancelAgain.status).toBe(200);
    expect(cancelAgain.body).toMatchObject({ id: cancelled.id, state: 'cancelled' });
    const completeAgain = await s.request('POST', `/v1/jobs/${done.id}/complete`, undefined, done.token);
    expect(completeAgain.status).toBe(200);
    expect(completeAgain.body).toMatchObject({ id: done.id, state: 'done' });

    const cancelDone = await s.request('POST', `/v1/jobs/${done.id}/cancel`);
    expect(cancelDone.status).toBe(409);
    expect(cancelDone.body.error).toMatchObject({
      code: 'already_finished',
      message: `job ${done.id} is already done`,
    });
    const completeCancelled = await s.request('POST', `/v1/jobs/${cancelled.id}/complete`);
    expect(completeCancelled.status).toBe(409);
    expect(completeCancelled.body.error.code).toBe('already_finished');
  });
});
