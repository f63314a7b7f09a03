/**
 * A job named "1" (boa jobs submit --name 1) could never be named on the command line: `boa jobs
 * cancel 1` cancels job id 1, another job. Such a name is refused at submit, by the CLI and the API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('a job name that reads as an id', () => {
  it.each(['1', ' 42 ', '-1', '1.5'])(
    '"%s" is refused at submit (exit 2), and no job is registered',
    async (name) => {
      const s = await startCliService();
      cleanups.push(s.close);
      const other = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'colleague-run' });
      expect(other.body.id).toBe(1);
      const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', name]);
      expect(submit.status).toBe(2);
      expect(submit.stderr).toMatch(/name must not read as a number \(boa jobs cancel 1 means job id 1\)/);
      const jobs = (await s.request('GET', '/v1/jobs')).body.jobs as Array<{ id: number }>;
      expect(jobs.map((j) => j.id)).toEqual([1]);
    },
  );

  it('the API answers 400 naming the field; a name with a digit and a letter is taken', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const refused = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: '7' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ field: 'name' });
    expect(refused.body.error.message).toMatch(/must not read as a number/);
    const taken = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'run-7' });
    expect(taken.status).toBe(201);
    const cancel = await s.boa(['jobs', 'cancel', 'run-7']);
    expect(cancel.status, cancel.stderr).toBe(0);
  });
});
