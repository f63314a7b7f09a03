import { expect } from 'vitest';
import type { startService } from '../service/harness.ts';

type Service = Awaited<ReturnType<typeof startService>>;

/**
 * Ticks (a minute each on the service's manual clock) until `ok`, letting the executor's real processes
 * start and stop in real time between ticks; fails if 200 ticks do not get there.
 */
export async function tickUntil(s: Service, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) {
    await s.ticks(1);
    await s.service.execution.settle();
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(ok()).toBe(true);
}
