import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKEN_INIT_SCRIPT, tokenInitManifests } from '../../infra/k8s/token-init.ts';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: any;
}

/** A stand-in Kubernetes API on 127.0.0.1 that answers GET and POST of one Secret as told. */
async function fakeApi(getStatus: number, postStatus = 201) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        auth: req.headers.authorization,
        body: body && JSON.parse(body),
      });
      res.statusCode = req.method === 'GET' ? getStatus : postStatus;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

function run(api: string): Promise<{ code: number | null; out: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'boa-token-'));
  writeFileSync(path.join(dir, 'token'), 'sa-token\n');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', TOKEN_INIT_SCRIPT], {
      env: {
        K8S_API: api,
        SA_TOKEN_FILE: path.join(dir, 'token'),
        SECRET_NAMESPACE: 'boa',
        SECRET_NAME: 'boa-token',
        SECRET_KEY: 'token',
      },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('token-init script', () => {
  it('creates the Secret with a random 32-byte token when it is absent, and never prints the token', async () => {
    const api = await fakeApi(404);
    const { code, out } = await run(api.url);
    expect(code).toBe(0);
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/v1/namespaces/boa/secrets/boa-token',
      'POST /api/v1/namespaces/boa/secrets',
    ]);
    expect(api.seen.every((s) => s.auth === 'Bearer sa-token')).toBe(true);
    const secret = api.seen[1]!.body;
    expect(secret).toMatchObject({ kind: 'Secret', metadata: { name: 'boa-token' }, type: 'Opaque' });
    expect(secret.stringData.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out).not.toContain(secret.stringData.token);
    expect(out).toContain('created');
  });

  it('leaves an existing Secret alone', async () => {
    const api = await fakeApi(200);
    expect((await run(api.url)).code).toBe(0);
    expect(api.seen.map((s) => s.method)).toEqual(['GET']);
  });

  it('accepts losing a creation race (409) and fails on other errors', async () => {
    expect((await run((await fakeApi(404, 409)).url)).code).toBe(0);
    const forbidden = await run((await fakeApi(403)).url);
    expect(forbidden.code).toBe(1);
    expect(forbidden.out).toContain('HTTP 403');
  });

  it('makes a new Job name whenever the Job spec changes, and the same name otherwise', () => {
    const job = (selector: Record<string, string>) =>
      tokenInitManifests({ namespace: 'boa', nodeSelector: selector }).find((m) => m.kind === 'Job') as any;
    expect(job({ a: 'b' }).metadata.name).toBe(job({ a: 'b' }).metadata.name);
    expect(job({ a: 'b' }).metadata.name).not.toBe(job({ a: 'c' }).metadata.name);
    expect(job({ a: 'b' }).metadata.name).toMatch(/^boa-token-init-[0-9a-f]{8}$/);
  });

  it('lets the Job read only its Secret and create Secrets in its namespace', () => {
    const role = tokenInitManifests({ namespace: 'boa', nodeSelector: {} }).find(
      (m) => m.kind === 'Role',
    ) as any;
    expect(role.metadata.namespace).toBe('boa');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['boa-token'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
  });
});
