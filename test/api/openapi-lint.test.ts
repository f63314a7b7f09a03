/**
 * The OpenAPI document as the service serves it passes `redocly lint` with its recommended rules, so
 * other tools (client generators) can consume it. Runs the real linter (@redocly/cli, pinned).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const REDOCLY = resolve(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'boa-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function servedDocument() {
  const s = await startService();
  try {
    return (await s.request('GET', '/openapi.json', undefined, null)).body;
  } finally {
    await s.close();
  }
}

describe('/openapi.json', () => {
  it('passes redocly lint with the recommended rules: no errors, no warnings', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(await servedDocument(), null, 2));
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
    // The page and the probes take no input and no token: they answer no 4XX, and none is made up.
    const no4xx = ['/', '/healthz', '/readyz'].map(
      (p) => `    - '#/paths/${p.replaceAll('/', '~1')}/get/responses'`,
    );
    writeFileSync(
      join(dir, '.redocly.lint-ignore.yaml'),
      ['openapi.json:', '  operation-4xx-response:', ...no4xx, ''].join('\n'),
    );
    const lint = spawnSync(process.execPath, [REDOCLY, 'lint', file, '--format', 'stylish'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = `${lint.stdout}\n${lint.stderr}`;
    expect(lint.status, report).toBe(0);
    expect(report).not.toMatch(/warning/i);
  }, 120_000);

  it('names every operation and describes every JSON response body with a schema of its fields', async () => {
    const doc = await servedDocument();
    expect(doc.servers?.length).toBeGreaterThan(0);
    expect(doc.info.license?.name).toBe('Apache-2.0');
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        ids.add(op.operationId);
        for (const [code, response] of Object.entries(op.responses as Record<string, any>)) {
          const schema = response.content?.['application/json']?.schema;
          if (!schema) continue;
          const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
          // No loose objects: every body names its fields.
          expect(resolved.additionalProperties, `${method} ${path} ${code}`).not.toEqual({});
          expect(resolved.type === 'object' ? Object.keys(resolved.properties ?? {}) : ['ok']).not.toEqual(
            [],
          );
        }
      }
    }
    expect(ids.size).toBeGreaterThan(15);
  });

  it('says what the service answers: a null workload, 413 and 415 for a body, the SVG chart, integer numbers', async () => {
    const doc = await servedDocument();
    // A self-launched job's workload is null in every job body.
    expect(doc.components.schemas.Job.properties.workload.type).toEqual(['object', 'null']);
    const bodyRoutes: Array<[string, string]> = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!op.requestBody) continue;
        bodyRoutes.push([method, path]);
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(['413', '415']),
        );
      }
    }
    expect(bodyRoutes.length).toBeGreaterThanOrEqual(6);
    const frontier = doc.paths['/v1/frontier'].get.responses['200'].content;
    expect(Object.keys(frontier)).toEqual(['application/json', 'image/svg+xml']);
    const logs = doc.paths['/v1/jobs/{id}/logs'].get.parameters as Array<{ name: string; schema: any }>;
    for (const name of ['id', 'rank', 'tail', 'generation'])
      expect(logs.find((p) => p.name === name)?.schema.type, name).toBe('integer');
    expect(logs.find((p) => p.name === 'rank')?.schema).toMatchObject({
      minimum: 0,
      maximum: 10_000,
      default: 0,
    });
  });
});
