/**
 * Arrival rates as the service plans for them, with the service's own code (plannedRates in
 * src/service/estimators.ts) and its defaults (src/service/config.ts): arrivals per class in the last
 * `rateWindowHours`, blended with each class's prior rate worth `priorWeightHours` of observation, a
 * fall followed at most halving every `rateHoldHalfLifeHours`, a step up followed within
 * `rateRiseHours` once the window is full. The
 * service's prior rates default to 0 (nothing configured), so a class counts only once it is seen.
 * Observation starts just before the first arrival (the service's start), or, given a history, at its
 * first submission: the window of a service that ran through those days holds them (`compare
 * --history`). Times are seconds here, milliseconds in the service.
 */
import { type PastEstimate, plannedRates } from '../../../service/estimators.ts';
import { DEFAULT_RISE, type RiseOptions } from '../../../service/rate-rise.ts';

export interface OnlineRateOptions {
  readonly windowHours: number;
  readonly priorWeightHours: number;
  /** Prior jobs/hour per class (the service's `priorRates`); classes not listed start at 0. */
  readonly priorRatesPerHour: Readonly<Record<string, number>>;
  /** Re-plan when a class's estimate moved by more than this fraction since the plan (the service's rule). */
  readonly replanOnMove: number;
  /** A fall in the estimate is planned for at most halving every this many hours (the service's rule). */
  readonly holdHalfLifeHours: number;
  /** z: the load planned at 1 + z / sqrt(arrivals seen) times its estimate (the service's `rateConfidence`). */
  readonly confidence: number;
  /**
   * Submissions before the first arrival, `secondsBefore` it (> 0), oldest first: what the service's
   * window holds after running through other days; none for a service that starts with the trace.
   */
  readonly history: ReadonlyArray<HistoryArrival>;
  /** The service's rise detection (rate-rise.ts); null: none. */
  readonly rise: RiseOptions | null;
  /** Until the window is full, every class planned with this many more arrivals (the service's `firstDayArrivals`). */
  readonly firstDayArrivals: number;
}

export interface HistoryArrival {
  readonly app: string;
  readonly secondsBefore: number;
}

/** The service's defaults (test/sim/policies/boa/online-rates.test.ts checks them against its config). */
export const DEFAULT_ONLINE_RATES: OnlineRateOptions = {
  windowHours: 24,
  priorWeightHours: 2,
  priorRatesPerHour: {},
  replanOnMove: 0.25,
  holdHalfLifeHours: 48,
  confidence: 0,
  history: [],
  rise: DEFAULT_RISE,
  firstDayArrivals: 0,
};

const MS = 1000;

export class OnlineRates {
  readonly #classes: Array<{ name: string; priorRatePerHour: number }>;
  readonly #submissions: Array<{ className: string; submittedAt: number }> = [];
  #first: number | undefined;
  /** Estimates at past submissions (plannedRates). */
  readonly #memo = new Map<number, PastEstimate>();

  constructor(
    classNames: readonly string[],
    readonly options: OnlineRateOptions = DEFAULT_ONLINE_RATES,
  ) {
    this.#classes = classNames.map((name) => ({
      name,
      priorRatePerHour: options.priorRatesPerHour[name] ?? 0,
    }));
  }

  record(app: string, time: number): void {
    if (this.#first === undefined) {
      this.#first = time;
      for (const { app: past, secondsBefore } of this.options.history) {
        this.#first = Math.min(this.#first, time - secondsBefore);
        this.#submissions.push({ className: past, submittedAt: (time - secondsBefore) * MS });
      }
      // Oldest first: ratesAt drops from the front.
      this.#submissions.sort((a, b) => a.submittedAt - b.submittedAt);
    }
    this.#submissions.push({ className: app, submittedAt: time * MS });
  }

  /** Jobs per hour per class; classes estimated at 0 are left out (they are not planned). */
  ratesAt(now: number): Record<string, number> {
    if (this.#first === undefined) return {};
    // Each past estimate of the window reads a window before it.
    const windowStart = (now - 2 * this.options.windowHours * 3600) * MS;
    // Submissions arrive in time order: drop those that no estimate reads any more.
    let drop = 0;
    while (drop < this.#submissions.length && (this.#submissions[drop]?.submittedAt as number) <= windowStart)
      drop++;
    if (drop > 0) this.#submissions.splice(0, drop);
    const rates = plannedRates(
      this.#classes,
      this.#submissions,
      {
        now: now * MS,
        windowHours: this.options.windowHours,
        priorWeightHours: this.options.priorWeightHours,
        // The service starts before its first submission, which estimateRates then counts (it counts > start).
        observedSince: this.#first * MS - 1,
        holdHalfLifeHours: this.options.holdHalfLifeHours,
        confidence: this.options.confidence,
        ...(this.options.rise ? { rise: this.options.rise } : {}),
        firstDayArrivals: this.options.firstDayArrivals,
      },
      this.#memo,
    );
    return Object.fromEntries(Object.entries(rates).filter(([, rate]) => rate > 0));
  }
}
