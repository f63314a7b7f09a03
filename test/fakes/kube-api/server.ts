import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeApiCore } from './core.ts';
import type { Faults, RequestInfo } from './faults.ts';
import { serveLog } from './logs.ts';
import {
  API_VERSION_OF,
  isNamespaced,
  KIND_OF,
  KubeError,
  type KubeObject,
  RESOURCES,
  type Resource,
} from './objects.ts';
import { fieldMatcher, labelMatcher } from './selectors.ts';
import type { StoreEvent } from './store.ts';

/** One request the server answered, for tests that count calls (e.g. "created once"). */
export interface RequestRecord extends RequestInfo {
  readonly status: number;
}

interface Route {
  readonly resource: Resource;
  readonly namespace?: string;
  readonly name?: string;
  readonly status: boolean;
  /** The pods/{name}/log subresource (GET: the container's output as text). */
  readonly log?: boolean;
}

/**
 * /api/v1/namespaces/{ns}/{resource}[/{name}[/status]] and /api/v1/{resource}[/{name}[/status]] for core
 * resources; /apis/{group}/{version}/... (the same below) for the others, each under its own group only.
 */
function route(path: string): Route | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const prefix = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : 0;
  if (prefix === 0) return undefined;
  const apiVersion = parts.slice(1, prefix).join('/');
  const rest = parts.slice(prefix);
  const namespace = rest[0] === 'namespaces' && rest.length >= 3 ? rest[1] : undefined;
  const [resource, name, sub, extra] = namespace !== undefined ? rest.slice(2) : rest;
  if (!RESOURCES.includes(resource as Resource) || extra !== undefined) return undefined;
  if (API_VERSION_OF[resource as Resource] !== apiVersion) return undefined;
  if (sub === 'log' && resource === 'pods' && namespace !== undefined)
    return { resource: 'pods', namespace, name, status: false, log: true };
  if (sub !== undefined && sub !== 'status') return undefined;
  if (!isNamespaced(resource as Resource) && namespace !== undefined) return undefined;
  return { resource: resource as Resource, namespace, name, status: sub === 'status' };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new KubeError(400, 'BadRequest', 'request body is not valid JSON');
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * The HTTP face of the fake: core/v1 REST for pods, services, secrets, nodes, events and volume claims,
 * networking.k8s.io/v1 for network policies and storage.k8s.io/v1 for storage classes, with list and watch
 * (selectors, resourceVersion, 410 Expired), and faults applied before anything else.
 */
export class FakeKubeHttpServer {
  readonly requests: RequestRecord[] = [];
  private readonly server: Server;
  /** Open watch streams, with what stops their subscription. */
  private readonly watches = new Map<ServerResponse, () => void>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly followedLogs = new Set<ServerResponse>();

  constructor(
    private readonly core: KubeApiCore,
    private readonly faults: Faults,
  ) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        const kubeError =
          error instanceof KubeError
            ? error
            : new KubeError(500, 'InternalError', `fake kube-api: ${String(error)}`);
        this.answer(req, res, kubeError.code, kubeError.toStatus());
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Ends every open watch stream, as the real server does when a watch times out. */
  closeWatches(): void {
    for (const [res, stop] of this.watches) {
      stop();
      res.end();
    }
    this.watches.clear();
  }

  /**
   * Open watch streams get no more events and stay open (until their timeoutSeconds): a stream gone
   * quiet without the client seeing it close.
   */
  stallWatches(): void {
    for (const stop of this.watches.values()) stop();
  }

  openWatches(): number {
    return this.watches.size;
  }

  async close(): Promise<void> {
    this.closeWatches();
    this.cutLogStreams();
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers?: Record<string, string>,
  ) {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      watch: isWatch(url.searchParams),
      status,
    });
    send(res, status, body, headers);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const query = url.searchParams;
    const info: RequestInfo = { method, path: url.pathname, query, watch: isWatch(query) };
    const fault = this.faults.take(info);
    if (fault?.after) await fault.after;
    if (fault?.applied) {
      // Made as usual, whatever it would have answered (even an error) lost: the fault's answer instead.
      const r = route(url.pathname);
      if (!r || r.log || (method === 'GET' && !r.name && info.watch))
        throw new KubeError(500, 'InternalError', 'fake kube-api: applied faults are for REST requests');
      const body = method === 'GET' ? undefined : await readBody(req);
      try {
        this.rest(r, method, url.pathname, req.headers['content-type'] ?? '', body, query);
      } catch (error) {
        if (!(error instanceof KubeError)) throw error;
      }
    }
    if (fault?.timeout) {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    if (fault?.endAtOnce) {
      this.requests.push({ method, path: url.pathname, query, watch: info.watch, status: 200 });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
      return;
    }
    if (fault?.status) {
      const error = new KubeError(
        fault.status,
        fault.reason!,
        fault.message ?? `fake kube-api: injected ${fault.status} ${fault.reason}`,
      );
      const headers: Record<string, string> =
        fault.retryAfterSeconds !== undefined ? { 'Retry-After': String(fault.retryAfterSeconds) } : {};
      return this.answer(req, res, fault.status, error.toStatus(), headers);
    }
    if (url.pathname === '/version') {
      return this.answer(req, res, 200, { major: '1', minor: '31', gitVersion: 'v1.31.0-boa-fake' });
    }
    const r = route(url.pathname);
    if (!r)
      throw new KubeError(
        404,
        'NotFound',
        `the server could not find the requested resource (${url.pathname})`,
      );
    const body = method === 'GET' ? undefined : await readBody(req);
    if (r.log && method === 'GET') return this.log(req, res, r.namespace!, r.name!, query);
    if (method === 'GET' && !r.name && isWatch(query)) return this.watch(req, res, r, query);
    const contentType = req.headers['content-type'] ?? '';
    const answer = this.rest(r, method, url.pathname, contentType, body, query);
    return this.answer(req, res, answer.status, answer.body);
  }

  /** A REST request (not a watch or a log) made on the store: its answer, or a KubeError thrown. */
  private rest(
    r: Route,
    method: string,
    path: string,
    contentType: string,
    body: unknown,
    query: URLSearchParams,
  ): { status: number; body: unknown } {
    const { resource, namespace, name } = r;
    if (method === 'GET' && !name) return { status: 200, body: this.list(r, query) };
    if (method === 'GET') return { status: 200, body: this.core.get(resource, namespace, name!) };
    if (method === 'POST' && !name) {
      return { status: 201, body: this.core.create(resource, namespace, body as KubeObject) };
    }
    if (method === 'PUT' && name) {
      return {
        status: 200,
        body: this.core.replace(resource, namespace, name, body as KubeObject, r.status),
      };
    }
    if (method === 'PATCH' && name) {
      return { status: 200, body: this.core.patch(resource, namespace, name, contentType, body) };
    }
    if (method === 'DELETE' && name) {
      const options = (body ?? {}) as Record<string, any>;
      const grace = query.get('gracePeriodSeconds') ?? options.gracePeriodSeconds;
      const policy = query.get('propagationPolicy') ?? options.propagationPolicy;
      const deleted = this.core.delete(resource, namespace, name, {
        ...(grace !== undefined && grace !== null ? { gracePeriodSeconds: Number(grace) } : {}),
        ...(policy ? { propagationPolicy: policy } : {}),
        ...(options.preconditions ? { preconditions: options.preconditions } : {}),
      });
      return { status: 200, body: deleted };
    }
    throw new KubeError(405, 'MethodNotAllowed', `${method} is not supported on ${path}`);
  }

  /** GET .../pods/{name}/log (logs.ts); a followed one is kept to be cut. */
  private log(
    req: IncomingMessage,
    res: ServerResponse,
    namespace: string,
    name: string,
    query: URLSearchParams,
  ): void {
    this.requests.push({
      method: 'GET',
      path: new URL(req.url ?? '/', 'http://fake').pathname,
      query,
      watch: false,
      status: 200,
    });
    const open = serveLog(this.core, res, req, namespace, name, query);
    if (!open) return;
    this.followedLogs.add(open);
    open.on('close', () => this.followedLogs.delete(open));
  }

  openLogStreams(): number {
    return this.followedLogs.size;
  }

  cutLogStreams(): void {
    for (const res of this.followedLogs) res.destroy();
    this.followedLogs.clear();
  }

  private list(r: Route, query: URLSearchParams): unknown {
    const matches = matcher(r, query);
    return {
      apiVersion: API_VERSION_OF[r.resource],
      kind: `${KIND_OF[r.resource]}List`,
      metadata: { resourceVersion: String(this.core.store.currentVersion()) },
      items: this.core.store.list(r.resource, r.namespace).filter(matches),
    };
  }

  /** A chunked stream of JSON lines; from "0" or no version: the current objects as ADDED first. */
  private watch(req: IncomingMessage, res: ServerResponse, r: Route, query: URLSearchParams): void {
    const matches = matcher(r, query);
    const store = this.core.store;
    const versionParam = query.get('resourceVersion');
    const from = versionParam && versionParam !== '0' ? Number(versionParam) : store.currentVersion();
    if (!Number.isInteger(from))
      throw new KubeError(400, 'BadRequest', `invalid resourceVersion "${versionParam}"`);
    this.requests.push({
      method: 'GET',
      path: new URL(req.url ?? '/', 'http://fake').pathname,
      query,
      watch: true,
      status: 200,
    });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const write = (type: string, object: unknown) => {
      if (!res.writableEnded) res.write(`${JSON.stringify({ type, object })}\n`);
    };
    if (!versionParam || versionParam === '0') {
      for (const obj of store.list(r.resource, r.namespace).filter(matches)) write('ADDED', obj);
    }
    const deliver = (event: StoreEvent) => {
      if (event.resource !== r.resource) return;
      const now = matches(event.object);
      const before = event.previous !== undefined && matches(event.previous);
      if (event.type === 'MODIFIED') {
        if (now) write(before ? 'MODIFIED' : 'ADDED', event.object);
        else if (before) write('DELETED', event.object);
      } else if (now) write(event.type, event.object);
    };
    const subscription = store.subscribe(from, deliver);
    if (subscription === 'expired') {
      const gone = new KubeError(
        410,
        'Expired',
        `too old resource version: ${from} (${store.currentVersion()})`,
      );
      write('ERROR', gone.toStatus());
      res.end();
      return;
    }
    subscription.backlog.forEach(deliver);
    this.watches.set(res, subscription.stop);
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? 0);
    const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    res.on('close', () => {
      subscription.stop();
      this.watches.delete(res);
      if (timer) clearTimeout(timer);
    });
  }
}

function isWatch(query: URLSearchParams): boolean {
  const watch = query.get('watch');
  return watch === 'true' || watch === '1';
}

function matcher(r: Route, query: URLSearchParams): (obj: KubeObject) => boolean {
  const labels = labelMatcher(query.get('labelSelector'));
  const fields = fieldMatcher(query.get('fieldSelector'));
  return (obj) =>
    (r.namespace === undefined || obj.metadata.namespace === r.namespace) && labels(obj) && fields(obj);
}
