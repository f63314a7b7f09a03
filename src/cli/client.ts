import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connectionEnd, proofMatches, TOKEN_PROOF_PATH, tokenProof } from '../core/token-proof.ts';
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

function apiError(text: string): ApiErrorBody['error'] | undefined {
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

function neverSent(error: unknown): boolean {
  if ((error as Error).name === 'TimeoutError') return false;
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === undefined || !CUT_AFTER_SENDING.has(code);
}

/** Why fetch failed, from the undici error's cause (ECONNREFUSED, ENOTFOUND, ...). */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** The boa HTTP API as the CLI uses it: every failure becomes a CliError with the right exit code. */
export class BoaClient {
  constructor(
    readonly connection: Connection,
    private readonly timeoutMs = 120_000,
  ) {}

  /**
   * The parsed JSON body and its text as received (what --json prints), and the response's headers;
   * `headers` adds request headers (Idempotency-Key). Every answer boa sends is a JSON object, and
   * `requires` names fields it always holds: an answer without them is not boa's (another service at
   * BOA_URL answering `{}` made `jobs cancel` print "job undefined is undefined" and exit 0, and most
   * commands a stack trace; found in a failure-mode review).
   */
  async json<T>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    requires: ReadonlyArray<keyof T & string> = [],
  ): Promise<{ data: T; text: string; headers: Headers }> {
    const answer = await this.send(method, path, body, headers);
    let data: unknown;
    try {
      data = JSON.parse(answer.text);
    } catch {
      throw this.notBoa(`${method} ${path} answered with something that is not JSON`);
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data))
      throw this.notBoa(`${method} ${path} answered with JSON that is not an object`);
    const missing = requires.filter((field) => !(field in data));
    if (missing.length > 0)
      throw this.notBoa(
        `${method} ${path} answered with JSON without ${missing.map((f) => `"${f}"`).join(', ')}`,
      );
    return { data: data as T, text: answer.text, headers: answer.headers };
  }

  async text(method: string, path: string, body?: unknown): Promise<string> {
    return (await this.send(method, path, body)).text;
  }

  /** The text and the answer's headers (a log's `boa-generation`). */
  async textAnswer(method: string, path: string): Promise<{ text: string; headers: Headers }> {
    return this.send(method, path);
  }

  /**
   * A body read as it comes (a followed log), each piece to `onText`, over node:http rather than fetch,
   * whose body timeout (300 s) cut a job's log that was quiet for five minutes. The timeout is the
   * answer's (its headers), not the body's, which lasts as long as what it follows. `bytes`: how much
   * of the body came; `cut`: it broke off (the service stopped, the connection dropped) rather than ended.
   */
  async stream(
    path: string,
    onText: (text: string) => void,
    /** Called with the answer's headers as it starts, before its text. */
    onAnswer?: (header: (name: string) => string | undefined) => void,
  ): Promise<{ header(name: string): string | undefined; bytes: number; cut: boolean }> {
    await this.proven();
    const { url, token } = this.connection;
    const headers: Record<string, string> = { accept: 'text/plain, application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const target = new URL(url + path);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(error instanceof CliError ? error : this.unreachable(error));
      };
      let responded = false;
      const req = send(target, { headers }, (res) => {
        responded = true;
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        if (status < 200 || status >= 300) {
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => fail(this.refusal(status, Buffer.concat(chunks).toString('utf8'))));
          res.on('error', fail);
          return;
        }
        const header = (name: string) => {
          const value = res.headers[name.toLowerCase()];
          return Array.isArray(value) ? value[0] : value;
        };
        onAnswer?.(header);
        const decoder = new TextDecoder();
        let bytes = 0;
        /** The last bytes that came, across chunks: where a cut may have split a character. */
        let last = Buffer.alloc(0);
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          last = Buffer.concat([last, chunk.subarray(-3)]).subarray(-3);
          const text = decoder.decode(chunk, { stream: true });
          if (text) onText(text);
        });
        res.on('error', () => undefined); // a cut: said by 'close' below
        res.on('close', () => {
          if (settled) return;
          settled = true;
          const cut = !res.complete;
          // Cut inside a character: its bytes are not counted as got, so it comes again whole.
          if (cut) bytes -= unfinishedCharBytes(last);
          else {
            const rest = decoder.decode();
            if (rest) onText(rest);
          }
          resolve({ header, bytes, cut });
        });
      });
      const timer = setTimeout(() => {
        const timeout = new Error('timed out');
        timeout.name = 'TimeoutError';
        req.destroy(timeout);
      }, this.timeoutMs);
      req.on('error', (error) => {
        clearTimeout(timer);
        // Once the answer has begun, a broken connection is a cut, said by the answer's 'close'.
        if (!responded) fail(error);
      });
      req.end();
    });
  }

  private async send(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ text: string; headers: Headers }> {
    await this.proven();
    const { url, token } = this.connection;
    const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // A connection refused or a name not found never carried the request; a timeout or a connection
      // dropped after it was sent may have (boa saved the job, then died before answering).
      throw method === 'GET' || neverSent(error)
        ? this.unreachable(error)
        : this.brokenOff(method, path, error);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      // The answer began and broke off (the service stopped mid-answer, a proxy dropped it): undici's
      // "terminated" was thrown as it came, a stack trace and exit 1.
      throw this.brokenOff(method, path, error);
    }
    if (!res.ok) throw this.refusal(res.status, text);
    return { text, headers: res.headers };
  }

  /**
   * A token read from the local data dir's file is sent only to a service that proves it holds it
   * (src/core/token-proof.ts): boa may be down and another user's program listening on its port. Asked
   * before each request that carries it, not once: a follow or a wait goes on across a restart of boa,
   * and what answers after it need not be boa. A token given (--token, BOA_TOKEN) is sent as given.
   */
  private proven(): Promise<void> {
    const { tokenSource, token } = this.connection;
    if (tokenSource !== 'file' || !token) return Promise.resolve();
    return this.askProof(token);
  }

  private askProof(token: string): Promise<void> {
    const nonce = randomBytes(32).toString('base64url');
    const target = new URL(`${this.connection.url}${TOKEN_PROOF_PATH}?nonce=${nonce}`);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === undefined) resolve();
        else reject(error instanceof CliError ? error : this.unreachable(error));
        req.destroy();
      };
      // A connection of its own (no kept-alive one): the proof is of what listens now.
      const req = send(target, { headers: { accept: 'application/json' }, agent: false }, (res) => {
        // The service's end of the connection, as this end sees it: a relay's, not boa's, if one is between.
        const end = connectionEnd(res.socket.remoteAddress, res.socket.remotePort);
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          // An answer no proof is as long as: whatever sends it, it is not believed, nor read on.
          if (size > 64 * 1024) return settle(this.notProven(`an answer of over 64 KiB`));
          chunks.push(chunk);
        });
        res.on('error', (error) => settle(error));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          // A boa still starting answers every path 503: said as any request's would be.
          if (status === 503 && apiError(text)) return settle(this.refusal(status, text));
          if (status !== 200) return settle(this.notProven(`HTTP ${status}`));
          let proof: unknown;
          try {
            proof = (JSON.parse(text) as { proof?: unknown }).proof;
          } catch {
            return settle(this.notProven('an answer that is not JSON'));
          }
          if (!proofMatches(proof, tokenProof(token, nonce, end)))
            return settle(this.notProven('a wrong proof'));
          settle();
        });
      });
      const timer = setTimeout(() => {
        const timeout = new Error('timed out');
        timeout.name = 'TimeoutError';
        req.destroy(timeout);
      }, this.timeoutMs);
      req.on('error', (error) => settle(error));
      req.end();
    });
  }

  /** The local service did not prove it holds the token file's token: it was not sent. */
  private notProven(answer: string): CliError {
    const { url, tokenFile } = this.connection;
    return new CliError(
      `the service at ${url} did not prove it holds the operator token in ${tokenFile} (it answered ` +
        `GET ${TOKEN_PROOF_PATH} with ${answer}), so the token was not sent: that file is another ` +
        `service's, or what listens at ${url} is not the boa that wrote it (set BOA_DATA_DIR to this ` +
        "service's data dir, or BOA_TOKEN)",
      EXIT.unauthorized,
    );
  }

  private unreachable(error: unknown): CliError {
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
  private brokenOff(method: string, path: string, error: unknown): CliError {
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

  private refusal(status: number, text: string): CliError {
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

  private notBoa(what: string): CliError {
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

/** The bytes at the end of `chunk` that begin a UTF-8 character without finishing it. */
export function unfinishedCharBytes(chunk: Buffer): number {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}
