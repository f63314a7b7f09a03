/**
 * A queue for the budget whose order is not the submission order: long jobs of three classes, mixed,
 * at a budget of one node, so some run and the rest queue least expected work left first.
 */
import { expect } from 'vitest';
import type { startService } from './harness.ts';

type Service = Pick<Awaited<ReturnType<typeof startService>>, 'request' | 'service' | 'ticks'>;

/** The service's config for it: no boot or release wait, leases that outlast the test. */
export const QUEUE_CONFIG = {
  leaseSeconds: 86_400,
  local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
};

/** Budget 4, twelve jobs named `<class>-<i>`, two ticks. */
export async function queueMixedLongJobs(s: Service): Promise<void> {
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
  await s.service.planner.idle();
  for (let i = 0; i < 4; i++)
    for (const className of ['imagenet', 'deepspeech2', 'yolov3'])
      expect(
        (await s.request('POST', '/v1/jobs', { class: className, name: `${className}-${i}` })).status,
      ).toBe(201);
  await s.ticks(2);
}
