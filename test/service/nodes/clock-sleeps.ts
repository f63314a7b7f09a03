import type { Sleep } from '../../../src/cloud/time.ts';
import type { ManualClock } from '../harness.ts';

/**
 * The node pool's sleeps on the test's manual clock: a sleep ends only when the test has moved the
 * clock past it (`wake`), so a pass that waits for the cloud stays waiting while ticks go on, as it
 * would in production, and nothing waits in real time.
 */
export function clockSleeps(clock: ManualClock) {
  const waiting: { until: number; resolve: () => void }[] = [];
  let sleeping: (() => void) | undefined;
  const sleep: Sleep = (ms) =>
    new Promise<void>((resolve) => {
      waiting.push({ until: clock.now() + ms, resolve });
      sleeping?.();
    });
  return {
    sleep,
    /** Resolves once something sleeps (at once if something does already). */
    asleep: () =>
      new Promise<'asleep'>((resolve) => {
        if (waiting.length > 0) return resolve('asleep');
        sleeping = () => {
          sleeping = undefined;
          resolve('asleep');
        };
      }),
    /** When the earliest sleep ends, if any. */
    earliest: () => (waiting.length ? Math.min(...waiting.map((w) => w.until)) : undefined),
    /** Ends the sleeps the clock has reached. */
    wake() {
      const now = clock.now();
      for (const w of waiting.filter((w) => w.until <= now)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    },
    /** Sleeps not ended yet. */
    get pending() {
      return waiting.length;
    },
  };
}

interface Ticking {
  readonly boa: { readonly scheduler: { tick(): Promise<unknown>; settle(): Promise<void> } };
  readonly sync: () => void;
}

/**
 * One tick as the service's timer runs it: the tick, then the clock moves to the next tick while the
 * node pass the tick started runs on, its sleeps ending as the clock reaches them. True when no node
 * pass is running any more at the next tick (it ended within its tick).
 */
export async function tickInTime(
  started: Ticking,
  clock: ManualClock,
  sleeps: ClockSleeps,
  tickMs: number,
): Promise<boolean> {
  const next = clock.now() + tickMs;
  started.sync();
  await started.boa.scheduler.tick();
  let ended = false;
  for (;;) {
    const outcome = await Promise.race([
      started.boa.scheduler.settle().then(() => 'settled' as const),
      sleeps.asleep(),
    ]);
    if (outcome === 'settled') {
      ended = true;
      break;
    }
    const due = sleeps.earliest();
    if (due === undefined || due >= next) break;
    clock.t = Math.max(clock.t, due);
    sleeps.wake();
  }
  clock.t = next;
  return ended;
}

export type ClockSleeps = ReturnType<typeof clockSleeps>;
