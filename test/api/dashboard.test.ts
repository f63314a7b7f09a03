/**
 * The dashboard in a real headless Chromium (Debian's `chromium`, driven by playwright-core): it loads
 * with the operator token, shows the budget line and the current numbers, and refuses a bad token.
 * `npm test` installs Chromium first when it is missing and we may (scripts/ensure-chromium.mjs);
 * without it this file is skipped, saying so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { when } from '../../src/cli/format.ts';
import { startCliService } from '../cli/cli-harness.ts';
import { haveChromium, launchDashboardBrowser } from './chromium.ts';

describe.skipIf(!haveChromium)('dashboard in headless Chromium', () => {
  let service: Awaited<ReturnType<typeof startCliService>>;
  let context: BrowserContext;
  const temp = mkdtempSync(join(tmpdir(), 'boa-dashboard-'));
  const screenshots = join(temp, 'screenshots');
  const requested: string[] = [];
  const notFound: string[] = [];

  beforeAll(async () => {
    service = await startCliService({ config: { priorRates: { cifar10: 6, bert: 1 } } });
    await service.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const jobs = [];
    for (let i = 0; i < 6; i++) {
      jobs.push((await service.request('POST', '/v1/jobs', { class: 'cifar10', name: `j${i}` })).body);
    }
    // An hour and a half of ledger on the service's clock; the jobs poll like live ones.
    for (let t = 0; t < 90; t++) {
      await service.ticks(1);
      for (const job of jobs)
        await service.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
    }
    context = await launchDashboardBrowser(join(temp, 'profile'));
    context.on('request', (r) => requested.push(r.url()));
    // The browser's own requests (its icon) are not seen as requests, but their 404s are logged.
    context.on('console', (m) => m.text().includes('404') && notFound.push(m.text()));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await service?.close();
    if (process.env.BOA_KEEP_SCREENSHOTS) process.stderr.write(`dashboard screenshots in ${screenshots}\n`);
    else rmSync(temp, { recursive: true, force: true });
  });

  async function signIn(page: Page, token: string) {
    await page.goto(`${service.url}/`);
    await page.locator('#token').fill(token);
    await page.locator('#sign-in').click();
  }

  /** The drawn charts' widths, in pixels. */
  const chartWidths = (page: Page) =>
    Promise.all(
      ['#spend-chart svg', '#frontier-chart svg'].map(async (q) =>
        Number(await page.locator(q).getAttribute('width')),
      ),
    );

  it('refuses a wrong token and shows nothing but the login', async () => {
    const page = await context.newPage();
    await signIn(page, 'not-the-operator-token');
    // Where the token is, on this machine and deployed (found in a trial: only data/token was named).
    expect(await page.locator('#login').textContent()).toMatch(/data\/token.*TokenCommand/s);
    await expect
      .poll(() => page.locator('#login-error').textContent(), { timeout: 30_000 })
      .toMatch(/token was refused/);
    expect(await page.locator('#dashboard').isVisible()).toBe(false);
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }
        ).sessionStorage.getItem('boa.operatorToken'),
      ),
    ).toBeNull();
    await page.screenshot({ path: join(screenshots, 'refused.png') });
    await page.close();
  });

  it('loads with the token: the budget, the current numbers and both charts with the budget marked', async () => {
    // Submitted after the last tick: it waits, and the active jobs say why.
    const late = (await service.request('POST', '/v1/jobs', { class: 'bert', name: 'late' })).body;
    const page = await context.newPage();
    await signIn(page, service.token);
    // As wide as their boxes from the first drawing, not only after the 10 s refresh (drawn while the
    // dashboard was hidden, they measured 0 and showed nothing until then).
    await page.locator('#frontier-chart svg').waitFor({ state: 'attached', timeout: 30_000 });
    for (const width of await chartWidths(page)) expect(width).toBeGreaterThan(300);
    await page.locator('#spend-chart svg').waitFor({ timeout: 30_000 });
    await page.locator('#frontier-chart svg').waitFor({ timeout: 30_000 });

    const budget = await service.request('GET', '/v1/budget');
    const status = await service.request('GET', '/v1/status');
    expect(await page.locator('#budget-value').textContent()).toBe('40.0');
    expect(await page.locator('#paid-value').textContent()).toBe(
      budget.body.window.paidGpuHoursPerHour.toFixed(2),
    );
    expect(await page.locator('#gpus-value').textContent()).toBe(
      `${status.body.gpus.allocated} / ${status.body.gpus.paid}`,
    );
    expect(await page.locator('#spend-chart svg').textContent()).toContain('budget 40');
    expect(await page.locator('#frontier-chart svg').textContent()).toContain('your budget 40');
    // Each chart has its numbers as text (found in a trial: none, a screen reader met only SVG marks).
    const text = (id: string) => page.locator(id).getAttribute('aria-label');
    expect(await text('#spend-chart')).toMatch(
      /^Spend against the budget, GPU-hours per hour: paid \d+\.\d\d and allocated \d+\.\d\d in the last bucket, to \S+Z, paid \d+\.\d\d on average over the 24 h window; budget 40\.$/,
    );
    expect(await text('#frontier-chart')).toMatch(
      /^What each budget buys: average JCT from \S+ (min|h) at [\d.]+ GPU-hours per hour to .*; your budget 40; the plan .*\.$/,
    );
    expect(await page.locator('#widths table').textContent()).toContain('cifar10');
    expect(await page.locator('#jobs').textContent()).toMatch(/running|waiting/);
    // Every active job by name: running ones with their GPUs first, then waiting ones with the reason.
    const rows = await page.locator('#active-jobs tbody tr').allInnerTexts();
    const cells = rows.map((r) => r.split('\t').map((c) => c.trim()));
    expect(cells.map((c) => c[1]).sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5', 'late']);
    const reason =
      /^(waits for a plan|queued for the budget|waits for the next tick|waits for nodes to boot)/;
    for (const [, , , state, gpus, gpuHours, , , note] of cells) {
      if (state === 'running') expect(Number(gpus)).toBeGreaterThan(0);
      else expect([state, gpus, note]).toEqual(['waiting', '0', expect.stringMatching(reason)]);
      // What each has cost the budget so far (none yet for one never placed).
      expect(gpuHours).toMatch(state === 'running' ? /^\d+\.\d\d$/ : /^0\.00$/);
    }
    const states = cells.map((c) => c[3]);
    expect(states).toEqual([...states].sort((a, b) => (a === b ? 0 : a === 'running' ? -1 : 1)));
    const lateRow = cells.find((c) => c[1] === 'late')!;
    expect(lateRow.slice(0, 5)).toEqual([String(late.id), 'late', 'bert', 'waiting', '0']);
    // No tick has seen it yet: nodes or not, the next tick places it.
    expect(lateRow[8]).toBe('waits for the next tick');
    // Kept for the session: a reload needs no token.
    await page.reload();
    await page.locator('#frontier-chart svg').waitFor({ state: 'attached', timeout: 30_000 });
    for (const width of await chartWidths(page)) expect(width).toBeGreaterThan(300);
    expect(await page.locator('#login').isVisible()).toBe(false);
    await page.screenshot({ path: join(screenshots, 'dashboard.png'), fullPage: true });
    // Everything came from boa itself: no internet needed.
    expect(requested.filter((u) => !u.startsWith(service.url))).toEqual([]);
    // Nothing asked for that boa does not serve (found in a trial: /favicon.ico, a 404 on every load).
    expect(notFound).toEqual([]);
    await page.close();
  }, 90_000);

  it("shows every time in UTC as the CLI does, not in the browser's zone", async () => {
    const page = await context.newPage();
    await signIn(page, service.token);
    await page.locator('#spend-chart svg').waitFor({ timeout: 30_000 });
    // The browser really is in that zone: 5 h 30 min ahead of UTC.
    expect(await page.evaluate(() => new Date('2026-11-01T00:00:00Z').getTimezoneOffset())).toBe(-330);
    const status = (await service.request('GET', '/v1/status')).body;
    // The service's clock is hours behind the browser's: its last tick reads as long ago.
    expect(await page.locator('#health').textContent()).toMatch(
      new RegExp(`^(last tick|no tick since) ${when(status.lastTickAt)}( |$)`),
    );
    const jobs: Array<{ id: number; startedAt: string | null; submittedAt: string }> = (
      await service.request('GET', '/v1/jobs?limit=100')
    ).body.jobs;
    const since = new Map(jobs.map((j) => [String(j.id), when(j.startedAt ?? j.submittedAt)]));
    const rows = await page.locator('#active-jobs tbody tr').allInnerTexts();
    expect(rows.length).toBeGreaterThan(0);
    for (const [id, , , , , , , started] of rows.map((r) => r.split('\t').map((c) => c.trim()))) {
      expect([id, started]).toEqual([id, since.get(id!)]);
    }
    // The ledger runs from the service clock's 00:00 UTC for an hour and a half: the axis reads 01:00,
    // where in Kolkata's zone it read 5:30 to 7 AM (24-hour since 2026-12-01: it read "01 AM").
    const axis = page.locator('#spend-chart svg g[aria-label^="X-axis"]');
    expect(await axis.locator('.role-axis-title').textContent()).toBe('time (UTC)');
    const labels = await axis.locator('.role-axis-label text').allTextContents();
    expect(labels).toContain('01:00');
    expect(labels.filter((l) => /^0[5-7]/.test(l))).toEqual([]);
    expect(await page.locator('#updated').textContent()).toMatch(/^updated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await page.close();
  }, 60_000);

  it('fits a phone-wide window: no section wider than the page, a wide table scrolls in its own box', async () => {
    // A long name makes the active jobs' table wider than the window.
    await service.request('POST', '/v1/jobs', { class: 'bert', name: `sweep-${'lr0.001-bs256-'.repeat(8)}` });
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 800 });
    await signIn(page, service.token);
    await page.locator('#spend-chart svg').waitFor({ timeout: 30_000 });
    await page.locator('#active-jobs table').waitFor({ timeout: 30_000 });
    // Found in a trial: the grid's 560 px columns made the page 665 px wide at 390, header and all
    // sections sliding off to the right.
    const widths = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      return {
        page: doc.documentElement.scrollWidth,
        sections: [...doc.querySelectorAll('main > section, main > p, header')].map(
          (e: any) => e.getBoundingClientRect().right,
        ),
      };
    });
    expect(widths.page).toBeLessThanOrEqual(390);
    for (const right of widths.sections) expect(right).toBeLessThanOrEqual(390);
    // Squeezed, the table's headings and times stay on one line each (found in review: 2026-12- above
    // 06T22:34:25Z, GPU- above h).
    const lines = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const linesOf = (cell: any) => {
        const range = doc.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map((r: any) => Math.round(r.top))).size;
      };
      const rows = [...doc.querySelectorAll('#active-jobs tr')];
      return rows.flatMap((row: any) =>
        [...row.children]
          .filter((_c: any, i: number) => i === 5 || i === 7)
          .map((c: any) => [c.textContent, linesOf(c)]),
      );
    });
    expect(lines.length).toBeGreaterThan(2);
    for (const [text, count] of lines) expect([text, count]).toEqual([text, 1]);
    await page.screenshot({ path: join(screenshots, 'narrow.png'), fullPage: true });
    await page.close();
  }, 60_000);

  // Last: it changes the shared service's budget.
  it('draws the budget as it was over the chart, stepping down at a cut', async () => {
    const cutAt = (await service.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).body.setAt;
    await service.ticks(10);
    const page = await context.newPage();
    await signIn(page, service.token);
    await expect
      .poll(() => page.locator('#spend-chart').getAttribute('aria-label'), { timeout: 30_000 })
      .toMatch(new RegExp(`; budget 30 since ${when(cutAt)} \\(40 before\\)\\.$`));
    // The budget's line: one path from the chart's start to now, 40 then 30, so it spans a height (a
    // line at the budget now alone is flat).
    const line = page.locator('#spend-chart svg g.mark-line path[stroke="#c0392b"]');
    await line.waitFor({ timeout: 30_000 });
    const box = await line.boundingBox();
    expect(box?.height).toBeGreaterThan(10);
    expect(await page.locator('#spend-chart svg').textContent()).toContain('budget 30');
    await page.screenshot({ path: join(screenshots, 'budget-cut.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
