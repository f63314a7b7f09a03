/**
 * An executor whose reconciles fail (another boa holds the jobs namespace, RBAC taken away) starts and
 * stops nothing: /v1/status says so, with the error and since when, until one succeeds. Only the log
 * said it before (found in review: the claim's holder was in no status).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/commands/status.ts';
import type { Executor } from '../../src/service/ports.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const CLAIMED = 'jobs namespace boa-jobs belongs to another boa (instance boa-a; this one is boa-b)';

describe('an executor failing', () => {
  it('shows in /v1/status from its first failure, its since kept, until a reconcile succeeds', async () => {
    let failWith: string | undefined = CLAIMED;
    const executor: Executor = {
      kind: 'kubernetes',
      reconcile: async () => {
        if (failWith) throw new Error(failWith);
        return [];
      },
      close: async () => {},
    };
    const s = await startService({ executor });
    cleanups.push(s.close);
    const status = async () => {
      await s.service.execution.settle();
      return (await s.request('GET', '/v1/status')).body.executorError;
    };
    const startedAt = new Date(s.clock.now()).toISOString(); // the first reconcile, before any tick
    await s.ticks(1);
    const first = await status();
    expect(first).toEqual({ message: CLAIMED, since: startedAt });
    // boa status says it in a row of its own.
    const body = (await s.request('GET', '/v1/status')).body;
    expect(renderStatus(body)).toMatch(
      new RegExp(
        `^executor error\\s+failing since .*, jobs neither start nor stop: ${CLAIMED.replace(/[()]/g, '\\$&')}$`,
        'm',
      ),
    );
    // Still failing, with another error: the newest error, since the first failure.
    failWith = 'pods is forbidden';
    s.clock.advance(30);
    await s.ticks(1);
    expect(await status()).toEqual({ message: 'pods is forbidden', since: first.since });
    failWith = undefined;
    await s.ticks(1);
    expect(await status()).toBeNull();
  });
});
