/**
 * A TCP proxy whose connections can be made to go silent: from `silence()` on, what was open forwards
 * nothing either way and closes nothing, as a NAT or proxy that forgot a connection (no FIN, no RST, no
 * byte ever again). Connections made after it work. `silence(only)` silences those whose last request's
 * line matches: a browser sends its next requests on its idle connections, which a test keeps working.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function startSilentProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  const open = new Set<{ client: Socket; upstream: Socket; silent: boolean; lastRequest: string }>();
  let connections = 0;
  const server = createServer((client) => {
    connections += 1;
    const upstream = connect(Number(target.port), target.hostname);
    const link = { client, upstream, silent: false, lastRequest: '' };
    open.add(link);
    client.on('data', (bytes: Buffer) => {
      const requestLine = /^[A-Z]+ \S+ HTTP\/1\.1/.exec(bytes.toString('latin1'));
      if (requestLine) link.lastRequest = requestLine[0];
      if (!link.silent) upstream.write(bytes);
    });
    upstream.on('data', (bytes) => void (link.silent || client.write(bytes)));
    // A forgotten connection says nothing of its end (both ends are destroyed at close).
    const end = () => {
      if (link.silent) return;
      open.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Connections made through it so far. */
    connections: () => connections,
    silence: (only?: RegExp) => {
      for (const link of open) if (!only || only.test(link.lastRequest)) link.silent = true;
    },
    close: () =>
      new Promise<void>((closed) => {
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => closed());
      }),
  };
}
