import { type Logger, pino } from 'pino';
import type { Clock } from './ports.ts';
import { tokensEqual } from './tokens.ts';

/** Where a rotating operator token is read from (Secrets Manager on EKS: src/cloud/aws/token-secret.ts). */
export interface TokenSource {
  /** What is read, for logs (never the token): e.g. the secret's ARN. */
  readonly name: string;
  /** The token now in force. */
  read(): Promise<string>;
}

export interface OperatorTokenOptions {
  readonly source?: TokenSource;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The source is re-read this often (default 5 minutes). */
  readonly refreshMs?: number;
  /** A replaced token is still accepted this long after boa saw the new one (default 15 minutes). */
  readonly overlapMs?: number;
  /** A token nobody knows makes boa re-read the source at most this often (default 30 s). */
  readonly unknownTokenRefreshGapMs?: number;
}

/**
 * The operator token in force. A fixed one (BOA_TOKEN, --token, the data dir's token file) never
 * changes. One read from a source (the Secrets Manager secret on EKS) is re-read on a timer and when a
 * request brings a token boa does not know (a client that already has the rotated one; rate-limited, so
 * wrong tokens cannot make boa hammer the source); after a rotation the previous token is still accepted
 * for a short overlap, so clients switch without a restart of boa or a burst of 401s.
 */
export class OperatorToken {
  private currentToken: string;
  private previous: { token: string; until: number } | undefined;
  private lastReadAt: number;
  private reading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    initial: string,
    private readonly options: OperatorTokenOptions,
  ) {
    this.currentToken = initial;
    this.lastReadAt = options.clock.now();
  }

  /** A token that never changes (BOA_TOKEN, --token, the data dir's token file). */
  static fixed(token: string): OperatorToken {
    return new OperatorToken(token, { clock: { now: Date.now }, logger: pino({ level: 'silent' }) });
  }

  /** The token now in force (what a local first run prints). */
  get current(): string {
    return this.currentToken;
  }

  get rotates(): boolean {
    return this.options.source !== undefined;
  }

  /** Constant-time check against the current token and, during its overlap, the previous one. */
  matches(given: string): boolean {
    const current = tokensEqual(given, this.currentToken);
    const previous =
      this.previous !== undefined &&
      this.options.clock.now() < this.previous.until &&
      tokensEqual(given, this.previous.token);
    return current || previous;
  }

  /**
   * For a token that does not match: re-reads the source unless it was read within the gap, then
   * checks again. Never throws (a failed read is logged and the known tokens stay in force).
   */
  async matchesAfterRefresh(given: string): Promise<boolean> {
    if (this.matches(given)) return true;
    if (!this.options.source) return false;
    const gap = this.options.unknownTokenRefreshGapMs ?? 30_000;
    // A read under way (another request's, or the timer's) may bring this very token: wait for it,
    // or requests sent together with a new token (the dashboard's eight) all but one got a 401.
    if (this.reading) await this.reading;
    else if (this.options.clock.now() - this.lastReadAt >= gap) await this.refresh('unknown-token');
    return this.matches(given);
  }

  /** Re-reads the source now (one read at a time); a new token starts the previous one's overlap. */
  refresh(reason: 'timer' | 'unknown-token' = 'timer'): Promise<void> {
    const source = this.options.source;
    if (!source) return Promise.resolve();
    this.reading ??= this.readFrom(source, reason).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** Starts the periodic re-read (no-op for a fixed token). The timer never keeps the process alive. */
  start(): void {
    if (!this.options.source || this.timer) return;
    this.timer = setInterval(() => void this.refresh('timer'), this.options.refreshMs ?? 300_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async readFrom(source: TokenSource, reason: string): Promise<void> {
    const { clock, logger } = this.options;
    this.lastReadAt = clock.now();
    let token: string;
    try {
      token = await source.read();
    } catch (error) {
      logger.warn(
        { event: 'operator_token.read_failed', source: source.name, reason, error: (error as Error).message },
        'could not re-read the operator token; the known one stays in force',
      );
      return;
    }
    if (tokensEqual(token, this.currentToken)) return;
    const overlapMs = this.options.overlapMs ?? 15 * 60_000;
    this.previous = { token: this.currentToken, until: clock.now() + overlapMs };
    this.currentToken = token;
    logger.info(
      {
        event: 'operator_token.rotated',
        source: source.name,
        reason,
        previousAcceptedUntil: new Date(this.previous.until).toISOString(),
      },
      'operator token rotated; the previous one is accepted until the overlap ends',
    );
  }
}
