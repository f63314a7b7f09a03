/** A request as fault rules see it. */
export interface RequestInfo {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** True for watch requests. */
  readonly watch: boolean;
}

export interface Fault {
  /** How many matching requests fail (default 1). */
  readonly count?: number;
  /** Answer with this HTTP status (429, 500, 503, 409, ...) and a Status body. */
  readonly status?: number;
  /** Status reason, default from the code (TooManyRequests, InternalError, Conflict, ...). */
  readonly reason?: string;
  /** Status message, default "fake kube-api: injected <status> <reason>" (e.g. a real RBAC refusal's). */
  readonly message?: string;
  /** Sent with 429 as Retry-After. */
  readonly retryAfterSeconds?: number;
  /** Never answer: the client's own timeout must give up. */
  readonly timeout?: boolean;
  /** Answer 200 and end the stream at once with nothing in it (a watch, through a proxy that cuts it). */
  readonly endAtOnce?: boolean;
  /**
   * Answer as usual, but only once this settles: requests held together read the same state (two
   * clients racing to update one object).
   */
  readonly after?: Promise<unknown>;
  /**
   * With `status` or `timeout`: the request is applied first, as it would be answered, and that answer
   * lost: the injected status instead, or none (a write the API server made whose answer a load
   * balancer or the client's timeout dropped). Only for plain REST requests, not watches or logs.
   */
  readonly applied?: boolean;
  /** Which requests it applies to (default: all but watches). */
  readonly match?: (request: RequestInfo) => boolean;
}

const REASONS: Record<number, string> = {
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export interface FaultAction {
  readonly status?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly retryAfterSeconds?: number;
  readonly timeout?: boolean;
  readonly endAtOnce?: boolean;
  readonly after?: Promise<unknown>;
  readonly applied?: boolean;
}

/** Queued faults, consumed in order by the requests they match. */
export class Faults {
  private readonly queue: { fault: Fault; left: number }[] = [];
  /** Requests that were failed on purpose, for tests to count. */
  injected = 0;

  /** The next `count` matching requests fail as described. */
  inject(fault: Fault): void {
    if (!fault.timeout && !fault.status && !fault.endAtOnce && !fault.after)
      throw new Error('fault: give a status, timeout: true, endAtOnce: true or after');
    if (fault.applied && !fault.timeout && !fault.status)
      throw new Error('fault: applied needs a status or timeout: true (the answer lost)');
    this.queue.push({ fault, left: fault.count ?? 1 });
  }

  clear(): void {
    this.queue.length = 0;
  }

  /** Faults not yet consumed. */
  pending(): number {
    return this.queue.reduce((sum, f) => sum + f.left, 0);
  }

  take(request: RequestInfo): FaultAction | undefined {
    const entry = this.queue.find(({ fault }) => (fault.match ? fault.match(request) : !request.watch));
    if (!entry) return undefined;
    entry.left--;
    if (entry.left <= 0) this.queue.splice(this.queue.indexOf(entry), 1);
    this.injected++;
    const { status, message, timeout, endAtOnce, retryAfterSeconds, after, applied } = entry.fault;
    return {
      ...(status !== undefined
        ? { status, reason: entry.fault.reason ?? REASONS[status] ?? 'InternalError' }
        : {}),
      ...(message !== undefined ? { message } : {}),
      ...(timeout ? { timeout } : {}),
      ...(endAtOnce ? { endAtOnce } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      ...(after ? { after } : {}),
      ...(applied ? { applied } : {}),
    };
  }
}
