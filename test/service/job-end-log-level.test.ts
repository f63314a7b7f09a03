/**
 * Found in an SRE trial: each restart of a failing job was logged at warn (job_restart), and its final
 * failure at info (job_failed), so a log read at warn showed the restarts and never the end.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { startService } from './harness.ts';

const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
});

it('logs a job failed or lost at warn, one done or cancelled at info', async () => {
  const lines: Array<{ level: number; event?: string; jobId?: number; reason?: string }> = [];
  const out = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  const boa = await startService({ config: { budget: 40 }, logger: pino({ level: 'info' }, out) });
  closes.push(boa.close);
  await boa.service.planner.idle();
  const ids = ['done', 'cancelled', 'failed', 'lost'].map((state) => {
    const { job } = boa.service.registerJob('cifar10', state);
    const failure =
      state === 'failed' ? { exitCode: 3, reason: 'rank 0 exited 3 (after 3 restarts)' } : undefined;
    boa.service.finishJob(job.id, state as 'done', undefined, failure);
    return job.id;
  });
  const ends = lines.filter((l) => l.event?.startsWith('job_') && l.event !== 'job_registered');
  expect(ends.map((l) => [l.event, l.jobId, l.level])).toEqual([
    ['job_done', ids[0], 30],
    ['job_cancelled', ids[1], 30],
    ['job_failed', ids[2], 40],
    ['job_lost', ids[3], 40],
  ]);
  expect(ends[2]).toMatchObject({ exitCode: 3, reason: 'rank 0 exited 3 (after 3 restarts)' });
});
