/**
 * The service holds every full, sliding budget window (issue 14), read from its own ledger: waves of
 * submissions with lulls between them, on a window scaled down to 6 minutes (1 s ticks, a 36 s
 * horizon) so that it fills and slides many times. In any window the ledger's paid GPU-hours stay
 * within budget x (window + slack x horizon), plus the half node the ceiling keeps against flapping.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET, FLAP_GUARD, HOUR, scaledWindowService, WINDOW_CAP, WINDOW_HOURS } from './scaled-window.ts';

/** Each wave: 80 jobs every 150 s, each running for 60 s; the lulls between leave budget unspent. */
const WAVE_JOBS = 80;
const WAVE_EVERY_TICKS = 150;

describe('the budget window, sliding', () => {
  it('pays at most budget x (window + slack x horizon) in any full window, through waves and lulls', async () => {
    const run = await scaledWindowService('window-token-0123456789', 1);
    try {
      let heaviest = 0;
      // 900 ticks: 15 minutes, the 6-minute window full from tick 360 on.
      for (let tick = 0; tick < 900; tick++) {
        // A wave, then a lull: the lull's unspent budget is what a window about to slide past it
        // could lend (the ceiling before 2026-11-27, last: 4.24 GPU-hours here, 5% over the budget).
        if (tick % WAVE_EVERY_TICKS === 0) run.register(WAVE_JOBS, 'w');
        await run.tick();
        if (run.now() - run.start >= WINDOW_HOURS * HOUR) heaviest = Math.max(heaviest, run.windowPaid());
      }
      expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
      // The waves use the budget: the heaviest window is near the cap, not far below it.
      expect(heaviest).toBeGreaterThan(0.9 * BUDGET * WINDOW_HOURS);
    } finally {
      await run.boa.close();
    }
  }, 240_000);
});
