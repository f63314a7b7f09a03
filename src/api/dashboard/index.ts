/**
 * The dashboard at `/`: one page, its scripts (listed in scripts.ts), and the chart library (vega,
 * vega-lite) served from the installed npm packages, so it works with no internet. The page holds no
 * data: it asks for the operator token once and reads the operator API with it, like any other client.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ApiEnv } from '../env.ts';
import { ErrorSchema, jsonContent } from '../schemas.ts';
import { DASHBOARD_SCRIPTS } from './scripts.ts';

const require = createRequire(import.meta.url);
const JS = 'text/javascript; charset=utf-8';

function asset(path: string, type: string) {
  return { body: readFileSync(path, 'utf8'), type };
}

/** Read once, at start: a few hundred kilobytes, served from memory. */
function loadAssets() {
  return new Map([
    ['/', asset(join(import.meta.dirname, 'page.html'), 'text/html; charset=utf-8')],
    ...DASHBOARD_SCRIPTS.map(
      (name) => [`/dashboard/${name}`, asset(join(import.meta.dirname, name), JS)] as const,
    ),
    ['/dashboard/vendor/vega.min.js', asset(require.resolve('vega/build/vega.min.js'), JS)],
    // Vega's expressions evaluated by an interpreter, not compiled with Function: no 'unsafe-eval'.
    [
      '/dashboard/vendor/vega-interpreter.min.js',
      asset(require.resolve('vega-interpreter/build/vega-interpreter.min.js'), JS),
    ],
    ['/dashboard/vendor/vega-lite.min.js', asset(require.resolve('vega-lite/build/vega-lite.min.js'), JS)],
  ]);
}

let assets: ReturnType<typeof loadAssets> | undefined;

export function dashboardRoutes(app: OpenAPIHono<ApiEnv>): void {
  assets ??= loadAssets();
  // The page in /openapi.json (its scripts are not: static files it loads, named by page.html).
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/',
    operationId: 'getDashboard',
    summary: 'The dashboard page; it asks for the operator token and reads the operator API with it',
    security: [],
    responses: {
      200: { description: 'the page', content: { 'text/html': { schema: z.string() } } },
      503: jsonContent(ErrorSchema, 'starting (`starting`)'),
    },
  });
  for (const [path, { body, type }] of assets) {
    app.get(path, (c) =>
      c.body(body, 200, {
        'content-type': type,
        'cache-control': 'no-cache',
        // The page loads only what boa serves, talks only to boa, and is never framed by another site.
        'content-security-policy':
          "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
      }),
    );
  }
}
