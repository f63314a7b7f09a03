/**
 * Refused tokens, logged without flooding: the first refusal logs at once, and later ones are
 * counted and logged together at most once a minute, so a guessing client leaves a trace an operator
 * can alert on (`auth_refused`) without one line per request. No token is ever logged.
 */
import type { Logger } from 'pino';
import type { BoaService } from '../service/service.ts';

export const REFUSAL_LOG_INTERVAL_MS = 60_000;

export class RefusalLog {
  #unlogged = 0;
  #lastLoggedAt = Number.NEGATIVE_INFINITY;
  #lastPath = '';

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  #flushTimer: NodeJS.Timeout | undefined;

  refused(path: string): void {
    this.#unlogged += 1;
    this.#lastPath = path;
    if (this.now() - this.#lastLoggedAt >= REFUSAL_LOG_INTERVAL_MS) this.flush();
    // A burst followed by silence is still logged, once its minute is over.
    else this.#flushTimer ??= setTimeout(() => this.flush(), REFUSAL_LOG_INTERVAL_MS).unref();
  }

  /** Logs the refusals not logged yet, if any. */
  flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#unlogged === 0) return;
    this.logger.warn(
      { event: 'auth_refused', refused: this.#unlogged, lastPath: this.#lastPath },
      'requests with a wrong or missing token were refused',
    );
    this.#unlogged = 0;
    this.#lastLoggedAt = this.now();
  }
}

const logs = new WeakMap<BoaService, RefusalLog>();

/** The service's one refusal log, shared by every route that checks a token. */
export function refusalLogOf(service: BoaService): RefusalLog {
  let log = logs.get(service);
  if (log === undefined) {
    log = new RefusalLog(service.deps.logger, () => service.deps.clock.now());
    logs.set(service, log);
  }
  return log;
}
