import { serve, type ServerType } from '@hono/node-server';
import { SECURITY_HEADERS } from '../api/security-headers.ts';
import { StoreError } from '../store/errors.ts';
import { ConfigError } from './config.ts';

/** A start-up failure that is not a setting: the port is taken, the address does not exist. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** node-server's handler: the request and its bindings (the connection, which GET /token-proof reads). */
type Fetch = (request: Request, env?: unknown) => Response | Promise<Response>;

/**
 * Binds the HTTP port before the service starts working, so a taken port ends the start before
 * anything is changed (a resize above all). Until `ready` hands over the app, every request gets 503.
 */
export async function listen(host: string, port: number) {
  let app: Fetch = () =>
    Response.json(
      { error: { code: 'starting', message: 'boa is starting' } },
      { status: 503, headers: SECURITY_HEADERS },
    );
  const fetch: Fetch = (request, env) => app(request, env);
  const { server, boundPort } = await new Promise<{ server: ServerType; boundPort: number }>((done, fail) => {
    const server = serve({ fetch, port, hostname: host }, (info) => done({ server, boundPort: info.port }));
    server.once('error', (error: NodeJS.ErrnoException) => {
      const what =
        error.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is in use: stop what holds it or choose another --port`
          : error.code === 'EADDRNOTAVAIL'
            ? `address ${host} is not on this machine: choose another --host`
            : error.code === 'EACCES'
              ? `port ${port} on ${host} needs privileges: choose a port above 1023`
              : `cannot listen on ${host}:${port}: ${error.message}`;
      fail(new StartupError(what));
    });
  });
  return {
    server,
    port: boundPort,
    ready: (handler: Fetch) => {
      app = handler;
    },
  };
}

/** One line for stderr and the exit code: 2 for a setting to fix, 1 for anything else. */
export function startFailure(error: unknown): { line: string; exitCode: 1 | 2 } {
  if (error instanceof ConfigError) return { line: `boa: ${error.message}`, exitCode: 2 };
  if (error instanceof StoreError) return { line: `boa: ${error.message}`, exitCode: error.exitCode };
  if (error instanceof StartupError) return { line: `boa: ${error.message}`, exitCode: 1 };
  const message = error instanceof Error ? error.message : String(error);
  return { line: `boa: failed to start: ${message.split('\n')[0]}`, exitCode: 1 };
}
