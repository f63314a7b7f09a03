/**
 * Found in an SRE trial: /metrics said how many jobs wait (boa_jobs{state="waiting"}) but not for how
 * long, so a queue stuck for an hour looked like a queue moving. The oldest unstarted job's wait now.
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
    Number(
      /^boa_oldest_unstarted_job_wait_seconds (\S+)$/m.exec((await boa.request('GET', '/metrics')).body)?.[1],
    );
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
