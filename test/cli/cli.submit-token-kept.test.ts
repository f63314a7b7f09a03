/**
 * `boa jobs submit` prints what the service registered, a self-launched job's token above all (shown
 * only then), even when a read it makes after the submission for a note fails: the job is registered
 * by then. Before, a failed `GET /v1/budget` (asked to say that no budget is set) ended the command
 * with an error and the token was never printed; the job held its place, unlaunchable, and a plain
 * retry submitted a second one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('boa jobs submit when a read after the submission fails', () => {
  it('still prints the job and its token, exit 0', async () => {
    let failBudgetReads = false;
    const s = await startCliService({}, async (request) => {
      // The service stops answering just after it registered the job (a restart, an upgrade).
      if (failBudgetReads && new URL(request.url).pathname === '/v1/budget')
        throw new Error('service going away');
    });
    cleanups.push(s.close);
    failBudgetReads = true;

    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'r18']);
    expect(submit.stderr).toBe('');
    expect(submit.status).toBe(0);
    const id = Number(/^job\s+(\d+) "r18" \(cifar10, waiting\)$/m.exec(submit.stdout)?.[1]);
    const token = /^token\s+(\S+)$/m.exec(submit.stdout)?.[1];
    expect(id).toBeGreaterThan(0);
    expect(token).toBeDefined();
    // The token printed is the job's: its launcher can run it.
    expect((await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token!)).status).toBe(200);
    // Unread, the budget is not said to be missing: nothing is said of it.
    expect(submit.stdout).not.toMatch(/^budget\s/m);

    // The same read answering again, the note is back.
    failBudgetReads = false;
    const again = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched']);
    expect(again.stdout).toMatch(/^budget\s+none is set/m);
  });
});
