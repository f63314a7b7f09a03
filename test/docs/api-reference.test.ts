/**
 * docs/api.md against the routes the hono app serves: every route is in the reference, and every
 * `METHOD /path` the reference names is served. Routes are added in code and described in prose;
 * nothing else ties the two together (the reference once wrote `.../cancel` for a whole route).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.ts';
import type { Scheduler } from '../../src/service/scheduler.ts';
import type { BoaService } from '../../src/service/service.ts';
import { REPO } from './markdown-files.ts';

// Routes are registered when the app is made; handlers read the service only when called, so none is
// needed to list them.
const app = createApp({} as BoaService, {} as Scheduler, 'operator-token-0123456789');

/** Hono's `:id` as the reference (and OpenAPI) writes it, `{id}`. */
const asDocumented = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

/** Static files the page loads, which the reference names as one family (`/dashboard/...`). */
const isPageAsset = (path: string) => path.startsWith('/dashboard/');

/** The routes the app serves, as `METHOD /path`; middleware (`use`) is registered as method ALL. */
function served(): Set<string> {
  return new Set(
    app.routes
      .filter((r) => r.method !== 'ALL' && !isPageAsset(r.path))
      .map((r) => `${r.method} ${asDocumented(r.path)}`),
  );
}

/** Every `METHOD /path` written in the Markdown, its query string left out. */
export function routesIn(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const [, method, path = ''] of markdown.matchAll(/\b(GET|POST|PUT|DELETE|PATCH) (\/[\w{}./-]*)/g))
    found.add(`${method} ${path.replace(/[.]+$/, '')}`);
  return found;
}

const doc = readFileSync(join(REPO, 'docs/api.md'), 'utf8');

describe('docs/api.md', () => {
  it('reads routes as the reference writes them', () => {
    expect([...routesIn('`GET /v1/jobs?state=running`, and `POST /v1/jobs/{id}/cancel`.')]).toEqual([
      'GET /v1/jobs',
      'POST /v1/jobs/{id}/cancel',
    ]);
  });

  it('names every route the service serves', () => {
    const routes = served();
    expect(routes.size).toBeGreaterThan(25);
    const documented = routesIn(doc);
    expect([...routes].filter((route) => !documented.has(route))).toEqual([]);
  });

  it('names no route the service does not serve', () => {
    const routes = served();
    expect([...routesIn(doc)].filter((route) => !routes.has(route))).toEqual([]);
  });
});
