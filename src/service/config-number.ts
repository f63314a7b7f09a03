import { z } from 'zod';

/** A setting that must be a number above 0, its errors naming it. */
export const positive = (what: string) =>
  z.number({ error: `${what} must be a number` }).positive(`${what} must be > 0`);

/**
 * A setting that becomes a timer's delay: above 0 and at most `max`. Node runs a timer longer than
 * 2^31-1 ms (about 24.8 days) after 1 ms instead, so an unbounded one ran the tick continuously
 * (found in a newcomer trial); every bound here is far below that, and says why it is where it is.
 */
export const timerSetting = (what: string, max: number, unit: string, why: string) =>
  positive(what).max(max, `${what} must be above 0 and at most ${max} ${unit}: ${why}`);
