import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATOR_TOKEN_RULE, sendableToken, usableOperatorToken } from '../core/operator-token-rule.ts';
import { CliError, EXIT, usageError } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface Connection {
  /** The service's base URL, without a trailing slash. */
  url: string;
  token: string | undefined;
  /** Where the token came from, for error messages. */
  tokenSource: 'option' | 'env' | 'file' | 'none';
  /** The local token file read (tokenSource 'file') or looked for (a local URL, no token found). */
  tokenFile?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

// The unspecified addresses too: a connection to 0.0.0.0 or [::] reaches this machine, as loopback does.
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]']);

/**
 * The URL parser writes every IPv4 host as four decimal parts (`127.1` is `127.0.0.1`), so a loopback
 * address is exactly this; a name such as `127.attacker.example` only starts like one and is remote.
 */
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

export function isLocalUrl(url: URL): boolean {
  return LOCAL_HOSTS.has(url.hostname) || LOOPBACK_V4.test(url.hostname);
}

/** The local service's data dir: BOA_DATA_DIR or ./data. */
export function localDataDir(env: Env, cwd: string): string {
  return env.BOA_DATA_DIR || join(cwd, 'data');
}

/** The file the local service writes its generated operator token to. */
export function localTokenFile(env: Env, cwd: string): string {
  return join(localDataDir(env, cwd), 'token');
}

/**
 * A bearer token is one word of printable ASCII on the wire: anything else could never be sent (fetch
 * refuses the header), and was reported as the service being unreachable (found in review).
 */
function sendable(token: string, from: string): string {
  if (sendableToken(token)) return token;
  throw usageError(
    `${from} must be the operator token as boa printed it: printable characters with no spaces or line breaks`,
  );
}

/**
 * URL: --url, else BOA_URL, else the local default. Token: --token, else BOA_TOKEN, else (only for a
 * local URL, so the token never leaves this machine by accident) the local service's token file.
 */
export function resolveConnection(
  options: { url?: string; token?: string },
  env: Env,
  cwd: string,
): Connection {
  const raw = options.url ?? (env.BOA_URL || DEFAULT_URL);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw usageError(`the service URL must be an http(s) URL like ${DEFAULT_URL}, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`the service URL must start with http:// or https://, got "${raw}"`);
  }
  // Every route is under /v1 (docs/api.md), so a URL given with it: the token check then failed as if
  // the token file were another service's (found by a newcomer's review). A proxy's own prefix stays.
  if (/\/v1\/*$/.test(parsed.pathname)) {
    const root = `${parsed.origin}${parsed.pathname.replace(/\/v1\/*$/, '')}`;
    throw usageError(
      `the service URL is the service's root, without /v1 (boa adds it): give ${root}, got "${raw}"`,
    );
  }
  const url = parsed.href.replace(/\/+$/, '');
  // Given empty (`--token "$UNSET_VAR"`), refused: falling back to BOA_TOKEN or the token file sent
  // a token the caller never meant (found in review).
  if (options.token !== undefined)
    return { url, token: sendable(options.token, '--token'), tokenSource: 'option' };
  if (env.BOA_TOKEN) return { url, token: sendable(env.BOA_TOKEN, 'BOA_TOKEN'), tokenSource: 'env' };
  const file = localTokenFile(env, cwd);
  if (!isLocalUrl(parsed)) return { url, token: undefined, tokenSource: 'none' };
  if (existsSync(file)) {
    return { url, token: tokenOfFile(file), tokenSource: 'file', tokenFile: file };
  }
  return { url, token: undefined, tokenSource: 'none', tokenFile: file };
}

/**
 * The token the local service wrote, by the service's own rule: one edited by hand into something no
 * request can carry (an escape, a NUL) was reported as the service being unreachable, exit 3 (found in
 * a trial). Such a file stops the service's start too, so the fix is the same.
 */
function tokenOfFile(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    // The service writes it readable by its own user alone (0600): boa run as another user got EACCES's stack trace.
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read the token file ${file}: ${code === 'EACCES' || code === 'EPERM' ? 'permission denied (the service wrote it for the user it runs as)' : code === 'EISDIR' ? 'it is a folder' : code}; give the operator token with BOA_TOKEN or --token`,
      EXIT.unauthorized,
    );
  }
  if (token === '' || usableOperatorToken(token)) return token;
  throw usageError(
    `the token file ${file} holds no usable operator token (${OPERATOR_TOKEN_RULE}): delete it and restart the service, which writes a new one, or give the token with BOA_TOKEN or --token`,
  );
}
