import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KEEPALIVES_MISSED, KeepaliveReader, LOG_KEEPALIVE_HEADER } from '../core/log-keepalive.ts';
import { connectionEnd, proofMatches, TOKEN_PROOF_PATH, tokenProof } from '../core/token-proof.ts';
import type { Connection } from './connection.ts';
import { AnswerErrors, apiError, neverSent } from './client-errors.ts';
import { CliError, EXIT } from './errors.ts';

/** The boa HTTP API as the CLI uses it: every failure becomes a CliError with the right exit code. */
export class BoaClient {
  private readonly errors: AnswerErrors;

  constructor(
    readonly connection: Connection,
    private readonly timeoutMs = 120_000,
  ) {
    this.errors = new AnswerErrors(connection, timeoutMs);
  }

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
      throw this.errors.notBoa(`${method} ${path} answered with something that is not JSON`);
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data))
      throw this.errors.notBoa(`${method} ${path} answered with JSON that is not an object`);
    const missing = requires.filter((field) => !(field in data));
    if (missing.length > 0)
      throw this.errors.notBoa(
        `${method} ${path} answered with JSON without ${missing.map((f) => `"${f}"`).join(', ')}`,
      );
    return { data: data as T, text: answer.text, headers: answer.headers };
  }

  async text(method: string, path: string, body?: unknown): Promise<string> {
    return (await this.send(method, path, body)).text;
  }

  /**
   * The text and the answer's headers (a log's `boa-generation`). `requires`: a header boa always sends
   * with this answer; a 200 without it is not boa's (another server's page at BOA_URL was printed as the
   * job's log, exit 0: found in review).
   */
  async textAnswer(
    method: string,
    path: string,
    requires?: string,
  ): Promise<{ text: string; headers: Headers }> {
    const answer = await this.send(method, path);
    if (requires !== undefined && answer.headers.get(requires) === null)
      throw this.errors.notBoa(`${method} ${path} answered without the header ${requires}`);
    return answer;
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
    /** A header boa always sends with this answer, as textAnswer's. */
    requires?: string,
    /**
     * A followed log's keepalives asked for (core/log-keepalive.ts): an answer that sends nothing for
     * KEEPALIVES_MISSED of their intervals is taken as cut (`silent`: a connection dropped without a word).
     */
    keepalive = false,
  ): Promise<{ header(name: string): string | undefined; bytes: number; cut: boolean; silent?: number }> {
    await this.proven();
    const { url, token } = this.connection;
    const headers: Record<string, string> = { accept: 'text/plain, application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (keepalive) headers[LOG_KEEPALIVE_HEADER] = 'true';
    const target = new URL(url + path);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(error instanceof CliError ? error : this.errors.unreachable(error));
      };
      let responded = false;
      const req = send(target, { headers }, (res) => {
        responded = true;
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        if (status < 200 || status >= 300) {
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => fail(this.errors.refusal(status, Buffer.concat(chunks).toString('utf8'))));
          res.on('error', fail);
          return;
        }
        const header = (name: string) => {
          const value = res.headers[name.toLowerCase()];
          return Array.isArray(value) ? value[0] : value;
        };
        if (requires !== undefined && header(requires) === undefined) {
          fail(this.errors.notBoa(`GET ${path} answered without the header ${requires}`));
          res.destroy();
          return;
        }
        onAnswer?.(header);
        const decoder = new TextDecoder();
        let bytes = 0;
        /** The last bytes that came, across chunks: where a cut may have split a character. */
        let last = Buffer.alloc(0);
        // Keepalives (a service from before them sends none, and its answer is read as it was).
        const keepaliveSeconds = keepalive ? Number(header(LOG_KEEPALIVE_HEADER)) : NaN;
        const keepalives = keepaliveSeconds > 0 ? new KeepaliveReader() : undefined;
        let silent: number | undefined;
        let silence: ReturnType<typeof setTimeout> | undefined;
        const awaitBytes = () => {
          if (!keepalives) return;
          clearTimeout(silence);
          const silenceMs = Math.round(keepaliveSeconds * KEEPALIVES_MISSED * 1000);
          silence = setTimeout(() => {
            silent = silenceMs / 1000;
            res.destroy(new Error(`nothing came for ${silent} s`));
          }, silenceMs);
        };
        awaitBytes();
        res.on('data', (received: Buffer) => {
          awaitBytes();
          const chunk = keepalives ? Buffer.from(keepalives.logBytes(received)) : received;
          if (chunk.length === 0) return;
          bytes += chunk.length;
          last = Buffer.concat([last, chunk.subarray(-3)]).subarray(-3);
          const text = decoder.decode(chunk, { stream: true });
          if (text) onText(text);
        });
        res.on('error', () => undefined); // a cut: said by 'close' below
        res.on('close', () => {
          clearTimeout(silence);
          if (settled) return;
          settled = true;
          const cut = !res.complete;
          // Cut inside a character: its bytes are not counted as got, so it comes again whole.
          if (cut) bytes -= unfinishedCharBytes(last);
          else {
            const rest = decoder.decode();
            if (rest) onText(rest);
          }
          resolve({ header, bytes, cut, ...(silent === undefined ? {} : { silent }) });
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
        ? this.errors.unreachable(error)
        : this.errors.brokenOff(method, path, error);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      // The answer began and broke off (the service stopped mid-answer, a proxy dropped it): undici's
      // "terminated" was thrown as it came, a stack trace and exit 1.
      throw this.errors.brokenOff(method, path, error);
    }
    if (!res.ok) throw this.errors.refusal(res.status, text);
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
        else reject(error instanceof CliError ? error : this.errors.unreachable(error));
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
          if (status === 503 && apiError(text)) return settle(this.errors.refusal(status, text));
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
}

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
