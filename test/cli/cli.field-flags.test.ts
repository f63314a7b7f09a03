/**
 * An API refusal of `jobs list --before` names the flag, as those of `jobs logs` do: "before must be
 * >= 1" alone did not say which flag (found in review).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

let cli: Awaited<ReturnType<typeof startCliService>>;
beforeAll(async () => {
  cli = await startCliService();
});
afterAll(() => cli.close());

describe('jobs list filters the service refuses', () => {
  it('names --before', async () => {
    const run = await cli.boa(['jobs', 'list', '--before', '-1']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/before.*\(--before\)/);
  });
});
