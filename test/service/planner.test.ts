/**
 * The planner (src/service/planner.ts) runs off the tick, from a timer nobody awaits: a computation
 * that fails must end as a failed plan (logged, `lastError`), never as a rejected promise, which in a
 * timer's `void` call is an unhandled rejection that stops the whole service.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PlanComputer } from '../../src/service/calculator/computer.ts';
import { Planner } from '../../src/service/planner.ts';
import type { Repository } from '../../src/store/repository.ts';

function failingInputs(logger = pino({ level: 'silent' })) {
  let computed = 0;
  const planner = new Planner({
    repo: {} as Repository,
    computer: {
      compute: () => {
        computed += 1;
        throw new Error('not reached');
      },
    } as unknown as PlanComputer,
    logger,
    now: () => 0,
    // Reading the inputs reads the store (the ledger's averages): an I/O error surfaces here.
    inputs: () => {
      throw new Error('SQLITE_IOERR: disk I/O error');
    },
    onPlan: () => {},
    intervalMs: 60_000,
  });
  return { planner, computed: () => computed };
}

describe('Planner', () => {
  it('ends a computation whose inputs cannot be read as a failed plan, not a rejection', async () => {
    const { planner, computed } = failingInputs();
    await expect(planner.request('budget')).resolves.toBeUndefined();
    expect(planner.lastError).toMatch(/SQLITE_IOERR/);
    expect(computed()).toBe(0);
  });

  it('runs a request queued behind a failed one, and idles afterwards', async () => {
    const { planner } = failingInputs();
    const first = planner.request('budget');
    const queued = planner.request('profile');
    await expect(first).resolves.toBeUndefined();
    await expect(queued).resolves.toBeUndefined();
    await expect(planner.idle()).resolves.toBeUndefined();
  });

  it('logs a failed plan with its stack, so a programming error can be found from the log', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { planner } = failingInputs(logger);
    await planner.request('budget');
    const failed = lines.map((line) => JSON.parse(line)).find((entry) => entry.event === 'plan_failed');
    expect(failed.error).toMatch(/SQLITE_IOERR/);
    expect(failed.stack).toMatch(/^Error: SQLITE_IOERR[^\n]*\n\s+at /);
  });
});
