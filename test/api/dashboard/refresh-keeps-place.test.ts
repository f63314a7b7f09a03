/**
 * The dashboard's 10 s refresh in headless Chromium leaves the operator's place alone (found in review:
 * every refresh redrew every table, so a job's name selected to copy was dropped, and a job's button
 * focused from the keyboard lost the focus to the page's top, every 10 s).
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, expect, it } from 'vitest';
import { startProcessService } from '../../cli/process-service.ts';
import { haveChromium, sharedDashboardBrowser } from '../chromium.ts';
import { submitScript, tickUntil } from './process-jobs.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});
const chromium = sharedDashboardBrowser();
afterAll(() => chromium.close());

/** The page's state, read in the browser (its globals are not typed here). */
const inPage = <T>(page: Page, read: (doc: any, win: any) => T) =>
  page.evaluate(`(${read.toString()})(document, window)`) as Promise<T>;
const refresh = (page: Page) => inPage(page, (_doc, win) => win.boaDashboard.refresh());

it.skipIf(!haveChromium)(
  "keeps a selected job name through a refresh, and the keyboard's focus on a job's id through a redraw",
  async () => {
    const { s } = await startProcessService(cleanups);
    const idle = 'setInterval(() => {}, 1000);';
    const first = await submitScript(s, 'first-job-to-copy', idle);
    const second = await submitScript(s, 'second', idle);
    await tickUntil(
      s,
      () => [first, second].every((id) => s.service.job(id).state === 'running'),
      'both running',
    );
    const context = await chromium.context();
    cleanups.unshift(() => context.close());
    const page = await context.newPage();
    await page.goto(`${s.url}/`);
    await page.locator('#token').fill(s.token);
    await page.locator('#sign-in').click();
    await page.locator(`#active-jobs button.job-log[data-job="${second}"]`).waitFor({ timeout: 30_000 });

    // A job's name selected, and a refresh with nothing changed: still selected.
    await inPage(page, (doc, win) => {
      const cell = [...doc.querySelectorAll('#active-jobs td')].find(
        (td: any) => td.textContent === 'first-job-to-copy',
      );
      const range = doc.createRange();
      range.selectNodeContents(cell);
      win.getSelection().removeAllRanges();
      win.getSelection().addRange(range);
    });
    await refresh(page);
    expect(await inPage(page, (_doc, win) => String(win.getSelection()))).toBe('first-job-to-copy');

    // A job's id focused (Tab), and a refresh after a tick: the table is redrawn (GPU-hours booked
    // since), the focus is on the same job's id.
    const table = () => page.locator('#active-jobs').innerHTML();
    await page.locator(`#active-jobs button.job-log[data-job="${second}"]`).focus();
    const before = await table();
    await s.ticks(2);
    await refresh(page);
    expect(await table()).not.toBe(before);
    expect(await inPage(page, (doc) => doc.activeElement?.outerHTML)).toMatch(
      new RegExp(`^<button [^>]*class="job-log" data-job="${second}"`),
    );
    // Enter on it opens that job's output, as a click does.
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#log-title').textContent(), { timeout: 30_000 })
      .toMatch(new RegExp(`^Job ${second}: `));

    // A chart's failure said in its place, the chart drawn there once it answers, and the same failure
    // said again after it: the words drawn before are no longer there, though they are the same.
    const failure = JSON.stringify({ error: { code: 'internal', message: 'internal error; see the log' } });
    const frontier = page.locator('#frontier-chart');
    for (const fails of [true, false, true]) {
      await page.unroute('**/v1/frontier');
      if (fails) await page.route('**/v1/frontier', (route) => route.fulfill({ status: 500, body: failure }));
      await refresh(page);
      if (fails)
        expect(await frontier.textContent()).toBe('could not show this: internal error; see the log');
      else expect(await frontier.locator('svg').count()).toBe(1);
    }
  },
  120_000,
);
