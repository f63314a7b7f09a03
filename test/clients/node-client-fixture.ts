/**
 * What the Node job client's tests (node-client.*.test.ts) share: the served boa of their file, clients
 * of its jobs with the executor's environment, and servers other than boa (stopped after each test).
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, onTestFinished } from 'vitest';
import { BoaJob } from '../../clients/node/boa-job.mjs';
import { killLeftovers } from './processes.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

export const CLIENT = resolve(import.meta.dirname, '../../clients/node/boa-job.mjs');

/** A port nothing listens on (until a test puts something there). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

/** A BOA_URL_FILE holding `url`, as boa's local executor writes one; removed after the test. */
export function urlFile(url: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-url-file-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, '0.url');
  writeFileSync(file, `${url}\n`);
  return file;
}

/**
 * The served boa of the calling test file and its helpers: call once at the file's top level. After
 * each test the processes it started are killed and the servers it started stopped.
 */
export function nodeClientFixture() {
  const { boa, clients } = servedBoaForFile();
  const strangers: Server[] = [];
  afterEach(async () => {
    killLeftovers();
    for (const server of strangers.splice(0)) {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    }
  });

  /** Something other than boa at BOA_URL (a proxy, another service) answering every request with
   * `status` and the JSON `body`; stopped after the test. Returns its URL. */
  async function stranger(status: number, body: unknown, port = 0): Promise<string> {
    return answering(() => [status, body], port);
  }

  /** A server answering each request with `answer()`'s status and JSON body; stopped after the test. */
  async function answering(answer: () => [number, unknown], port = 0): Promise<string> {
    const server = createHttpServer((_req, res) => {
      const [status, body] = answer();
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    strangers.push(server);
    await new Promise<void>((listening) => server.listen(port, '127.0.0.1', listening));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** boa at a second address: a server passing every request on to it; stopped after the test. */
  async function forwarding(): Promise<{ url: string; server: Server; seen: string[] }> {
    const seen: string[] = [];
    const server = createHttpServer(async (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const body: Buffer[] = [];
      for await (const chunk of req) body.push(chunk as Buffer);
      const answer = await fetch(boa.url + req.url, {
        method: req.method,
        headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
        body: body.length > 0 ? Buffer.concat(body) : undefined,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
    strangers.push(server);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
  }

  function executorEnv(job: TestJob): Record<string, string> {
    return {
      BOA_URL: boa.url,
      BOA_JOB_ID: String(job.id),
      BOA_JOB_TOKEN: job.token,
      BOA_GENERATION: String(job.generation),
      WORLD_SIZE: String(job.width),
      NNODES: '1',
      NODE_RANK: '0',
      NPROC_PER_NODE: String(job.width),
      MASTER_ADDR: '127.0.0.1',
      MASTER_PORT: '29500',
    };
  }

  function client(job: TestJob, options: Record<string, unknown> = {}) {
    const made = BoaJob.fromEnv(executorEnv(job), {
      pollSeconds: 0.05,
      backoffSeconds: 0.05,
      handleSigterm: false,
      ...options,
    });
    clients.push(made);
    return made;
  }

  const jobView = async (job: TestJob): Promise<any> =>
    (
      await fetch(`${boa.url}/v1/jobs/${job.id}`, { headers: { authorization: `Bearer ${job.token}` } })
    ).json();

  return { boa, clients, strangers, stranger, answering, forwarding, executorEnv, client, jobView };
}
