/** What `boa jobs logs -f` says while a followed job waits out a restart's backoff (jobs-logs.ts). */
import { expect, it } from 'vitest';
import { restartLine } from '../../src/cli/commands/jobs-logs.ts';
import type { jobView } from '../../src/service/views.ts';

type JobView = ReturnType<typeof jobView>;
const job = (patch: Partial<JobView>) =>
  ({
    id: 12,
    name: 'r18',
    restarts: 1,
    exitCode: 1,
    failureReason: 'exited 1',
    restartNotBefore: null,
    ...patch,
  }) as JobView;

it('says what ended the run and when the restart comes, and nothing for a job not backing off', () => {
  const at = '2026-11-30T10:00:10.000Z';
  expect(restartLine(job({ restartNotBefore: at }))).toBe(
    'job 12 (r18): its run ended (exit 1: exited 1); restart 1 at 2026-11-30T10:00:10Z',
  );
  expect(
    restartLine(job({ restartNotBefore: at, exitCode: null, failureReason: null, restarts: 2 })),
  ).toMatch(/^job 12 \(r18\): its run ended; restart 2 at /);
  expect(restartLine(job({}))).toBeUndefined();
});
