/**
 * The page as served (its policy and the scripts it loads) and the operator token the page signs in
 * with (forgotten, refused), in node (load-app.ts). The whole page in Chromium: ../dashboard.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DASHBOARD_SCRIPTS } from '../../../src/api/dashboard/scripts.ts';
import { type Service, servicesClosedAfterEach } from './app-service.ts';
import { loadDashboardScript } from './load-app.ts';

const service = servicesClosedAfterEach();

describe('the page as served', () => {
  it('loads only what boa serves and refuses to be framed by another site', async () => {
    const s = await service();
    const res = await s.app.request('/');
    expect(res.status).toBe(200);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    // No eval: the charts run vega's interpreter (dashboard.test.ts draws them in Chromium under it).
    expect(policy).toContain("script-src 'self';");
    expect(policy).not.toContain('unsafe-eval');
  });

  /** The scripts the served page loads, in its order; every `<script>` has a src (the policy runs no inline one). */
  async function pageScripts(s: Service) {
    const html = await (await s.app.request('/')).text();
    const tags = html.match(/<script\b[^>]*>/g) ?? [];
    return tags.map((tag) => /\bsrc="([^"]+)"/.exec(tag)?.[1]);
  }

  it("loads the chart library, then the dashboard's scripts in the order the node loader runs them", async () => {
    const scripts = await pageScripts(await service());
    expect(scripts).toEqual([
      '/dashboard/vendor/vega.min.js',
      '/dashboard/vendor/vega-interpreter.min.js',
      '/dashboard/vendor/vega-lite.min.js',
      ...DASHBOARD_SCRIPTS.map((name) => `/dashboard/${name}`),
    ]);
  });

  it('serves every script the page loads, as JavaScript, under the same policy', async () => {
    const s = await service();
    const scripts = await pageScripts(s);
    expect(scripts.length).toBeGreaterThan(2);
    for (const src of scripts) {
      const res = await s.app.request(src!);
      expect(res.status, src).toBe(200);
      expect(res.headers.get('content-type'), src).toBe('text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control'), src).toBe('no-cache');
      expect(res.headers.get('content-security-policy'), src).toContain("default-src 'self'");
      expect((await res.text()).length, src).toBeGreaterThan(0);
    }
  });
});

describe('the token', () => {
  it('is gone from the page after "forget token", and after the service refuses it', async () => {
    const s = await service();
    // The page talks to the real service (the charts cannot draw without a DOM: not checked here);
    // once `rotated`, the service no longer knows the token the page sends.
    let rotated = false;
    const dash = loadDashboardScript(async (path, init) =>
      s.app.request(path, rotated ? { headers: { authorization: 'Bearer a-token-rotated-in' } } : init),
    );
    const signIn = async () => {
      dash.element('token').value = s.token;
      dash.element('login').fire('submit');
      await expect.poll(() => dash.storage.get('boa.operatorToken'), { timeout: 20_000 }).toBe(s.token);
      expect(dash.element('dashboard').classes.has('hidden')).toBe(false);
    };
    await signIn();
    dash.element('logout').fire('click');
    expect(dash.element('login').classes.has('hidden')).toBe(false);
    expect(dash.storage.get('boa.operatorToken')).toBeUndefined();
    // Forgotten: not left in the form for the next click on "Show the dashboard".
    expect(dash.element('token').value).toBe('');

    // Signed in again, then the operator token is rotated: the next refresh is refused.
    await signIn();
    rotated = true;
    dash.refreshes.at(-1)!();
    await expect
      .poll(() => dash.element('login-error').textContent, { timeout: 20_000 })
      .toMatch(/no longer accepted/);
    expect([dash.storage.get('boa.operatorToken'), dash.element('token').value]).toEqual([undefined, '']);
  });
});
