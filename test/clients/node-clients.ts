import { onTestFinished, vi } from 'vitest';
import { BoaJob } from '../../clients/node/boa-job.mjs';
import type { ServedBoa, TestJob } from './served.ts';

/** Mutes (and records) the client's console.warn for the rest of the test. */
export function mutedWarnings() {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  onTestFinished(() => warn.mockRestore());
  return warn;
}

/**
 * Node clients of a served boa's job, quick to poll and retry, kept in `made` (closed by the test file
 * after each test): the timing the report tests run at.
 */
export function quickClient(
  boa: ServedBoa,
  made: BoaJob[],
  job: TestJob,
  options: Record<string, unknown> = {},
): BoaJob {
  const client = BoaJob.fromEnv(
    {
      BOA_URL: boa.url,
      BOA_JOB_ID: String(job.id),
      BOA_JOB_TOKEN: job.token,
      BOA_GENERATION: String(job.generation),
    },
    {
      pollSeconds: 0.05,
      backoffSeconds: 0.01,
      retries: 1,
      handleSigterm: false,
      warnEverySeconds: 0,
      ...options,
    },
  );
  made.push(client);
  return client;
}
