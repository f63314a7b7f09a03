/**
 * `GET /v1/jobs` shows the rows it listed, without reading each ended job again: a query per job cost
 * about 0.4 ms, so once weeks of jobs had ended the default 1000 held the service for half a second
 * (10000: 3.7 s), ticks and job polls waiting behind it (found in a long-life trial).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from '../service/harness.ts';

let boa: Awaited<ReturnType<typeof startService>> | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

describe('GET /v1/jobs', () => {
  it('reads no job again, and shows each as GET /v1/jobs/{id} does', async () => {
    const s = (boa = await startService());
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id);
    await s.ticks(2);
    for (const id of ids.slice(0, 8))
      expect((await s.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);

    const getJob = vi.spyOn(s.repo, 'getJob');
    const listed = await s.request('GET', '/v1/jobs');
    expect(getJob).not.toHaveBeenCalled();
    getJob.mockRestore();

    expect(listed.body.jobs.map((j: { id: number }) => j.id)).toEqual(ids);
    for (const job of listed.body.jobs)
      expect(job).toEqual((await s.request('GET', `/v1/jobs/${job.id}`)).body);
  });
});
