/**
 * Arrival rates as the service estimates them: arrivals per class in a sliding window (default the last
 * 24 hours) over the time observed. The prior is "no arrivals" weighted as one hour: until an hour has
 * been observed, counts are divided by one hour, so the first arrivals do not read as huge rates (one
 * job in the first minute would otherwise be 60 jobs/hour and plan everyone on one GPU); after that the
 * prior no longer counts and the estimate is the plain window average.
 */
import { SECONDS_PER_HOUR } from '../../../core/evaluate.ts';

export interface OnlineRateOptions {
  readonly windowSeconds: number;
  readonly priorSeconds: number;
}

export const DEFAULT_ONLINE_RATES: OnlineRateOptions = { windowSeconds: 24 * 3600, priorSeconds: 3600 };

export class OnlineRates {
  readonly #arrivals = new Map<string, number[]>();
  #first: number | undefined;

  constructor(readonly options: OnlineRateOptions = DEFAULT_ONLINE_RATES) {}

  record(app: string, time: number): void {
    this.#first ??= time;
    const times = this.#arrivals.get(app) ?? [];
    times.push(time);
    this.#arrivals.set(app, times);
  }

  /** Jobs per hour per class seen in the window; classes with no arrival in it are left out. */
  ratesAt(now: number): Record<string, number> {
    if (this.#first === undefined) return {};
    const from = now - this.options.windowSeconds;
    const span = Math.max(Math.min(this.options.windowSeconds, now - this.#first), this.options.priorSeconds);
    const rates: Record<string, number> = {};
    for (const [app, times] of this.#arrivals) {
      // Times arrive in order: drop the ones that left the window.
      let drop = 0;
      while (drop < times.length && (times[drop] as number) <= from) drop++;
      if (drop > 0) times.splice(0, drop);
      if (times.length > 0) rates[app] = (times.length * SECONDS_PER_HOUR) / span;
    }
    return rates;
  }
}
