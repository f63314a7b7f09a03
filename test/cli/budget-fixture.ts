import { startCliService } from './cli-harness.ts';
import { cleanups } from './cleanups.ts';

/** A CLI service, closed after the test (afterEach(runCleanups), from cleanups.ts). */
export async function started(options: Parameters<typeof startCliService>[0] = {}) {
  const s = await startCliService(options);
  cleanups.push(s.close);
  return s;
}

/** The budget the service holds, read over HTTP, not through the CLI. */
export async function storedBudget(s: Awaited<ReturnType<typeof started>>) {
  return (await s.request('GET', '/v1/budget')).body.gpuHoursPerHour;
}
