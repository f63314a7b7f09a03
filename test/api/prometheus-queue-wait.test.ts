/**
 * Found in an SRE trial: /metrics said how many jobs wait (boa_jobs{state="waiting"}) but not for how
 * long, so a queue stuck for an hour looked like a queue moving. The longest wait of a job waiting for GPUs now (boa_longest_job_wait_seconds).
 */
import { afterEach, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
});

it('serves how long the oldest job not yet started has waited, 0 with none', async () => {
  const boa = await startService({ config: { tickSeconds: 60 } });
  closes.push(boa.close);
  const wait = async () =>
    Number(/^boa_longest_job_wait_seconds (\S+)$/m.exec((await boa.request('GET', '/metrics')).body)?.[1]);
  expect(await wait()).toBe(0);
  // No budget: nothing starts.
  boa.service.registerJob('cifar10', 'a');
  boa.clock.advance(90);
  boa.service.registerJob('cifar10', 'b');
  boa.clock.advance(30);
  expect(await wait()).toBe(120);
  boa.service.finishJob(1, 'cancelled');
  expect(await wait()).toBe(30);
});

it('counts a job queued again after it ran from when it was queued, not as no wait', async () => {
  // Found in review: only jobs never started were read, so a queue of jobs a budget cut took off their
  // GPUs read 0 however long they waited.
  const boa = await startService({ config: { tickSeconds: 60 } });
  closes.push(boa.close);
  const wait = async () =>
    Number(/^boa_longest_job_wait_seconds (\S+)$/m.exec((await boa.request('GET', '/metrics')).body)?.[1]);
  const { job } = boa.service.registerJob('cifar10', 'a');
  boa.clock.advance(60);
  // As the scheduler leaves a running job it takes off its GPUs (scheduler.ts): waiting, a new
  // generation since then, startedAt kept.
  Object.assign(job, { startedAt: boa.clock.now() - 30_000, generationSince: boa.clock.now() });
  boa.clock.advance(600);
  expect(await wait()).toBe(600);
  // A job submitted since, waiting less, does not lower it.
  boa.service.registerJob('cifar10', 'b');
  boa.clock.advance(30);
  expect(await wait()).toBe(630);
});
