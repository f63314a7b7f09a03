/**
 * What the CLI says when a request to boa fails: each failure as a CliError with its exit code (no
 * service, an answer broken off, a refusal with the flag it names, a token refused, an answer not boa's).
 */
import type { Connection } from './connection.ts';
import { CliError, EXIT } from './errors.ts';

const TOKEN_HELP = 'set BOA_TOKEN to the operator token (local: the file data/token)';

/** Why a 401, and what to do, naming the token file the CLI read or looked for. */
function tokenHelp(connection: Connection): string {
  const { tokenSource, tokenFile } = connection;
  if (tokenSource === 'file') {
    return (
      `the token was refused: it was read from ${tokenFile}, which another service wrote ` +
      "(set BOA_DATA_DIR to this service's data dir, or BOA_TOKEN)"
    );
  }
  if (tokenSource === 'none' && tokenFile) {
    return (
      `no operator token was given: there is no ${tokenFile} ` +
      "(set BOA_DATA_DIR to the service's data dir, or BOA_TOKEN to the operator token)"
    );
  }
  // Name where the refused token came from: a wrong --token is not fixed by setting BOA_TOKEN.
  if (tokenSource === 'option')
    return 'the token given with --token was refused: give the operator token (local: the file data/token)';
  if (tokenSource === 'env') return `the token in BOA_TOKEN was refused: ${TOKEN_HELP}`;
  return `no operator token was given: ${TOKEN_HELP}`;
}

interface ApiErrorBody {
  error: { code: string; message: string; field?: string; [detail: string]: unknown };
}

export function apiError(text: string): ApiErrorBody['error'] | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<ApiErrorBody>;
    return typeof parsed.error?.message === 'string' ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}

/** How a connection fails once the request may have reached the service: closed or reset before its answer. */
const CUT_AFTER_SENDING = new Set([
  'UND_ERR_SOCKET',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
]);

export function neverSent(error: unknown): boolean {
  if ((error as Error).name === 'TimeoutError') return false;
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === undefined || !CUT_AFTER_SENDING.has(code);
}

/** Why fetch failed, from the undici error's cause (ECONNREFUSED, ENOTFOUND, ...). */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** The CliErrors of one connection's requests. */
export class AnswerErrors {
  constructor(
    private readonly connection: Connection,
    private readonly timeoutMs: number,
  ) {}

  unreachable(error: unknown): CliError {
    const { url } = this.connection;
    if ((error as Error).name === 'TimeoutError') {
      return new CliError(
        `the boa service at ${url} did not answer within ${this.timeoutMs / 1000} s`,
        EXIT.unreachable,
      );
    }
    return new CliError(
      `cannot reach the boa service at ${url} (is it running? set BOA_URL): ${causeOf(error)}`,
      EXIT.unreachable,
    );
  }

  /**
   * An answer cut off before its end: the service is as good as unreachable (exit 3, which `jobs logs
   * -f` rides out as it does a refused connection). A request that changes something may have been
   * carried out before the answer broke off: said so, not "try again".
   */
  brokenOff(method: string, path: string, error: unknown): CliError {
    const timedOut = (error as Error).name === 'TimeoutError';
    if (timedOut && method === 'GET') return this.unreachable(error);
    const { url } = this.connection;
    const retry =
      method === 'GET'
        ? 'try again'
        : 'it may have been carried out before the answer broke off: look before sending it again';
    if (timedOut)
      return new CliError(
        `the boa service at ${url} did not answer ${method} ${path} within ${this.timeoutMs / 1000} s: ` +
          'it may have been carried out: look before sending it again',
        EXIT.unreachable,
      );
    // undici's cause says it in words ("other side closed"); its code (UND_ERR_SOCKET) says less.
    const why = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    return new CliError(
      `the boa service at ${url} broke off its answer to ${method} ${path} (${why}): ${retry}`,
      EXIT.unreachable,
    );
  }

  refusal(status: number, text: string): CliError {
    const error = apiError(text);
    if (status === 401) {
      return new CliError(tokenHelp(this.connection), EXIT.unauthorized, error ? text : undefined);
    }
    if (!error) return this.notBoa(`HTTP ${status}`);
    // The flag the user typed, where the API's field has one (found in review: `--limit 0` was
    // answered "limit must be >= 1" with nothing naming the flag).
    const flag = error.field ? FLAG_OF_FIELD[error.field] : undefined;
    const field = flag
      ? ` (${flag})`
      : error.field && !error.message.includes(error.field)
        ? ` (field: ${error.field})`
        : '';
    // A job id no job has says where the ids are, as a name no job has does (job-refs.ts): "job 999 not
    // found" alone, beside "(see boa jobs list)" for `jobs show nosuch` (a newcomer).
    const hint =
      status === 404 && error.code === 'not_found' && /^job \d+ not found$/.test(error.message)
        ? ' (see boa jobs list)'
        : '';
    const message = `${error.message}${field}${hint}`;
    if (status === 400 || status === 422) return new CliError(message, EXIT.badInput, text);
    if (status >= 500) return new CliError(`the service failed: ${message}`, EXIT.failed, text);
    return new CliError(message, EXIT.failed, text);
  }

  notBoa(what: string): CliError {
    return new CliError(
      `unexpected answer from ${this.connection.url}: ${what} (is BOA_URL a boa service?)`,
      EXIT.failed,
    );
  }
}

/** API fields the CLI's flags set, for its messages. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  limit: '--limit',
  rank: '--rank',
  tail: '--tail',
  generation: '--generation',
  priorRatePerHour: '--prior-rate',
  // Not `name`: a class profile's own field of that name comes back from `classes put` too.
  before: '--before',
};
