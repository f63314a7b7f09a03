/**
 * The service settings a demo replay takes as flags, each checked with a usage error that names the
 * flag and what it allows. Kept with the replay: a resumed one must run with the same values.
 */
import { MAX_FIRST_DAY_ARRIVALS, MAX_RATE_CONFIDENCE } from '../../src/service/estimators.ts';
import { UsageError } from './inputs.ts';

const FLAGS = [
  {
    flag: '--warmup-hours',
    key: 'warmupHours',
    allowed: (h: number) => h >= 0,
    what: 'a number >= 0 (0: none)',
  },
  {
    flag: '--budget-window-hours',
    key: 'budgetWindowHours',
    allowed: (h: number) => h > 1,
    what: 'a number of hours above 1 (the spend ceiling looks one hour ahead)',
  },
  {
    flag: '--drain-after-hours',
    key: 'drainAfterHours',
    allowed: (h: number) => h >= 0,
    what: 'a number >= 0 (0: never)',
  },
  {
    flag: '--fill-below-band',
    key: 'fillBelowBand',
    allowed: (b: number) => b >= 0 && b < 1,
    what: 'a share of the budget from 0 (never) to below 1',
  },
  {
    flag: '--plan-cap-multiple',
    key: 'planCapMultiple',
    allowed: (m: number) => m === 0 || m >= 1,
    what: '0 (no cap) or a number >= 1',
  },
  {
    flag: '--credit-spend-hours',
    key: 'creditSpendHours',
    allowed: (h: number) => h >= 0,
    what: 'a number >= 0 (0: never)',
  },
  {
    flag: '--credit-load-share',
    key: 'creditLoadShare',
    allowed: (s: number) => s > 0,
    what: 'a number > 0',
  },
  {
    flag: '--rate-confidence',
    key: 'rateConfidence',
    allowed: (z: number) => z >= 0 && z <= MAX_RATE_CONFIDENCE,
    what: `a number from 0 (the estimate) to ${MAX_RATE_CONFIDENCE}`,
  },
  {
    flag: '--first-day-arrivals',
    key: 'firstDayArrivals',
    allowed: (a: number) => a >= 0 && a <= MAX_FIRST_DAY_ARRIVALS,
    what: `a number from 0 (none) to ${MAX_FIRST_DAY_ARRIVALS}`,
  },
] as const;

export type DemoSettingKey = (typeof FLAGS)[number]['key'];
export type DemoSettings = Record<DemoSettingKey, number>;

/** The settings from commander's options (strings), or a usage error for the first bad one. */
export function demoSettings(raw: Readonly<Record<DemoSettingKey, string>>): DemoSettings {
  const settings = {} as DemoSettings;
  for (const { flag, key, allowed, what } of FLAGS) {
    const value = Number(raw[key]);
    if (!allowed(value)) throw new UsageError(`${flag} must be ${what}, got "${raw[key]}"`);
    settings[key] = value;
  }
  return settings;
}

/** The settings by flag, as the replay records what it runs with. */
export function settingsByFlag(settings: DemoSettings): Record<string, number> {
  return Object.fromEntries(FLAGS.map(({ flag, key }) => [flag, settings[key]]));
}
