import { z } from '@hono/zod-openapi';

/**
 * Upper bounds on every number and name a caller can send. Each is far above any real use and low
 * enough that no single request can push the planner, the ledger or the node group into nonsense
 * (a budget of 1e308, work that overflows a sum). A class can still be declared whose load no budget
 * serves (an epoch of 1e8 GPU-seconds at 5 jobs an hour needs 138,889 GPU-hours per hour): that is a
 * load, not nonsense, and the budget then says it is below the minimum and jobs queue (found in review).
 */
export const BOUNDS = {
  /** GPU-hours per hour: 100,000 is a 25,000-node g4dn.12xlarge fleet, beyond any account's quota. */
  budget: 100_000,
  /** Expected arrivals per hour of one class. */
  ratePerHour: 100_000,
  /** Work a job reports in its current statistical epoch, in 1-GPU seconds (about 30 GPU-years). */
  workSeconds: 1e9,
  /** Statistical epochs of a class (the profile format's limit). */
  statEpoch: 1000,
  /** Job names, in characters. */
  jobName: 200,
  /** Arrivals in one history import: the service keeps no more (src/service/history.ts MAX_PAST_ARRIVALS). */
  historyArrivals: 10_000,
  /** Class names, in characters (the profile format's limit). */
  className: 64,
  /** An ISO 8601 time, in characters: 2026-11-27T09:30:00.123456789+05:30, to the nanosecond. */
  isoTime: 35,
} as const;

/** Class names as the profile format has them: 1-64 letters, digits, _ . - (starting alphanumeric). */
export const CLASS_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,${BOUNDS.className - 1}}$`);

/**
 * No control, format (bidi overrides), surrogate, private-use or unassigned characters, and no line or
 * paragraph separator (U+2028, U+2029: not controls to Unicode, but line breaks in a terminal's list).
 */
const PRINTABLE = /^[^\p{C}\p{Zl}\p{Zp}]*$/u;

export const className = () =>
  z.string().regex(CLASS_NAME, 'class names are 1-64 letters, digits, _ . - starting with a letter or digit');

export const printableName = (max: number) =>
  z
    .string()
    .min(1)
    .max(max, `at most ${max} characters`)
    .regex(PRINTABLE, 'only printable characters (no control characters such as NUL, newline or ESC)')
    // Blank, it shows as nothing in every list, and `jobs show "   "` finds nothing by it.
    .refine((name) => name.trim() !== '', 'must hold more than spaces')
    // The document's pattern without the JavaScript flag suffix the generator appends ("/u").
    .openapi({ pattern: PRINTABLE.source });

/*
 * Numbers whose every way out of range is said as the whole range: "must be >= 1" alone left the upper
 * bound to a second try, and "must be a whole number" both bounds.
 */

/** A whole number from `min` to `max`. */
export const wholeFromTo = (min: number, max: number) => {
  const range = `must be a whole number from ${min} to ${max}`;
  return z.number().int(range).min(min, range).max(max, range);
};

/** A number from `min` to `max`, fractions allowed. */
export const numberFromTo = (min: number, max: number) => {
  const range = `must be a number from ${min} to ${max}`;
  return z.number().min(min, range).max(max, range);
};

/** A number above 0 and at most `max` (`unit`, if given, says what it counts). */
export const positiveUpTo = (max: number, unit?: string) => {
  const range = `must be a number above 0 and at most ${max}${unit ? ` (${unit})` : ''}`;
  return z.number().positive(range).max(max, range);
};
