/**
 * The dashboard on a bad day, in headless Chromium against a served boa (as ../dashboard.test.ts): a
 * browser clock far off boa's, boa not answering when the page loads, a followed log through a restart
 * longer than a minute, names with HTML in them, a tab refreshing for hours, a plan of thousands of
 * classes, answers that are not boa's (a proxy's page, a redirect), a slow sign-in. Each case that
 * failed before its fix says what was seen; those marked (held) pin what was sound.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, expect, it } from 'vitest';
import { when } from '../../../src/cli/format.ts';
import { startCliService } from '../../cli/cli-harness.ts';
import { startProcessService } from '../../cli/process-service.ts';
import { ManualClock } from '../../service/harness.ts';
import { haveChromium, sharedDashboardBrowser } from '../chromium.ts';
import { submitScript, tickUntil } from './process-jobs.ts';

type Service = Awaited<ReturnType<typeof startCliService>>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});
const chromium = sharedDashboardBrowser();
afterAll(() => chromium.close());

async function service(options: Parameters<typeof startCliService>[0] = {}): Promise<Service> {
  const s = await startCliService({ config: { priorRates: { cifar10: 6 } }, ...options });
  cleanups.push(() => s.close());
  return s;
}

/** A browser context of its own (a clock installed is the whole context's), closed before its service. */
async function browser(): Promise<BrowserContext> {
  const context = await chromium.context();
  cleanups.unshift(() => context.close());
  return context;
}

async function signIn(page: Page, s: Service) {
  await page.goto(`${s.url}/`);
  await page.locator('#token').fill(s.token);
  await page.locator('#sign-in').click();
  await page.locator('#health span').first().waitFor({ timeout: 30_000 });
}

const HOUR = 3_600_000;

it.skipIf(!haveChromium)(
  "judges the last tick by boa's clock, not the browser's, which may be hours off",
  async () => {
    // boa's clock is the real one (its answers' Date): its one tick was 10 minutes ago, a scheduler
    // that has stopped (3 ticks of 60 s missed).
    const clock = new ManualClock(Date.now() - 10 * 60_000);
    const s = await service({ clock });
    await s.ticks(1);
    const staleTick = (await s.request('GET', '/v1/status')).body.lastTickAt;
    const health = (page: Page) => page.locator('#health').textContent();

    // A browser 2 hours slow: before, "last tick ..." as if all were well.
    const slow = await browser();
    await slow.clock.install({ time: Date.now() - 2 * HOUR });
    const slowPage = await slow.newPage();
    await signIn(slowPage, s);
    expect(await health(slowPage)).toMatch(
      new RegExp(`^no tick since ${when(staleTick)} \\(1\\d\\.\\d min ago, every 60 s expected\\)`),
    );

    // A browser 2 hours fast: the stopped scheduler is said with its real age (before: "2.2 h ago"), and
    // once boa ticks again, all is well (before: "no tick since" on every tick).
    const fast = await browser();
    await fast.clock.install({ time: Date.now() + 2 * HOUR });
    const fastPage = await fast.newPage();
    await signIn(fastPage, s);
    expect(await health(fastPage)).toMatch(/^no tick since \S+ \(1\d\.\d min ago/);
    clock.t = Date.now();
    await s.ticks(1);
    const freshTick = (await s.request('GET', '/v1/status')).body.lastTickAt;
    for (const page of [slowPage, fastPage]) {
      await page.evaluate(() => (globalThis as any).boaDashboard.refresh());
      expect(await health(page)).toBe(`last tick ${when(freshTick)}`);
    }
    // "updated" is on boa's clock too, as the last tick beside it: the same minute, not 2 hours off.
    const updated = /^updated (\S+)$/.exec((await fastPage.locator('#updated').textContent()) ?? '')![1]!;
    expect(Math.abs(Date.parse(updated) - Date.now())).toBeLessThan(5 * 60_000);
  },
  180_000,
);

it.skipIf(!haveChromium)(
  "follows a job's log on through boa not answering for 2 minutes (a restart), as boa jobs logs -f does",
  async () => {
    const { s } = await startProcessService(cleanups, { replicaCheckSeconds: 1 }, { followPollMs: 50 });
    const id = await submitScript(
      s,
      'printer',
      "let i = 0; setInterval(() => console.log('line ' + ++i), 100);",
    );
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const context = await browser();
    // The page's clock, which the test moves on: 2 minutes of boa not answering in a moment.
    await context.clock.install();
    const page = await context.newPage();
    await signIn(page, s);
    await page.locator(`#active-jobs button.job-log[data-job="${id}"]`).click();
    const text = () => page.locator('#log-text').textContent();
    const status = () => page.locator('#log-status').textContent();
    await expect.poll(text, { timeout: 30_000 }).toMatch(/line 3\n/);

    // boa goes away: its connections cut, nothing answers.
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    s.cutConnections();
    await expect.poll(status, { timeout: 30_000 }).toMatch(/^boa did not answer \(.*\); trying again$/);
    for (let i = 0; i < 4; i++) {
      await page.clock.fastForward(30_000);
      // Each jump wakes the follow's pause: it asks, fails, and waits again.
      await expect.poll(status, { timeout: 30_000 }).toMatch(/trying again$|stopped following/);
    }
    // Before: "stopped following: boa did not answer (Failed to fetch) for a minute; ...".
    expect(await status()).toMatch(/trying again$/);

    // boa is back: the follow goes on by itself, the lines written meanwhile shown.
    await page.unroute('**/v1/**');
    const shown = Number(/line (\d+)\n$/.exec((await text()) ?? '')?.[1]);
    await expect.poll(status, { timeout: 30_000 }).toMatch(/^following generation \d+/);
    await expect.poll(text, { timeout: 30_000 }).toContain(`line ${shown + 20}\n`);
  },
  180_000,
);

it.skipIf(!haveChromium)(
  'keeps the token of a page reloaded while boa does not answer, and shows itself once boa does',
  async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const page = await (await browser()).newPage();
    await signIn(page, s);
    // boa's API stops answering (restarting behind the page, say) and the page is reloaded.
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    await page.reload();
    await expect
      .poll(() => page.locator('#error').textContent(), { timeout: 30_000 })
      .toMatch(
        /^boa has not answered since \S+Z \(Failed to fetch\): nothing is shown until it does; the page asks again every 10 s\.$/,
      );
    // Before: the login form, "The token could not be checked: Failed to fetch", and the token dropped.
    expect(await page.locator('#login').isVisible()).toBe(false);
    const kept = () =>
      page.evaluate(() => (globalThis as any).sessionStorage.getItem('boa.operatorToken') as string | null);
    expect(await kept()).toBe(s.token);
    // It can still be forgotten meanwhile.
    expect(await page.locator('#logout').isVisible()).toBe(true);

    // boa answers again: the next refresh shows the dashboard, no reload, nothing typed.
    await page.unroute('**/v1/**');
    await page.locator('#budget-value').waitFor({ timeout: 30_000 });
    expect(await page.locator('#budget-value').textContent()).toBe('40.0');
    await expect.poll(() => page.locator('#error').textContent(), { timeout: 30_000 }).toBe('');
    expect(await kept()).toBe(s.token);
  },
  120_000,
);

/** Markup a name may hold: shown as its text, never run (each would set window.xss). */
const HOSTILE = `<img src=x onerror="window.xss=1"><script>window.xss=2</script>"'&`;

it.skipIf(!haveChromium)(
  'shows names with markup in them as text, in the active and the failed jobs (held)',
  async () => {
    const { s } = await startProcessService(cleanups, { maxRestarts: 0, replicaCheckSeconds: 1 });
    const failing = await submitScript(s, `${HOSTILE} failing`, 'process.exit(1)');
    const running = await submitScript(s, `${HOSTILE} running`, 'setInterval(() => {}, 1000)');
    await tickUntil(
      s,
      () => s.service.job(failing).state === 'failed' && s.service.job(running).state === 'running',
      'one failed, one running',
    );
    const page = await (await browser()).newPage();
    await signIn(page, s);
    await page.locator(`#active-jobs button.job-log[data-job="${running}"]`).click();
    await expect
      .poll(() => page.locator('#log-status').textContent(), { timeout: 30_000 })
      .toMatch(/following generation|is starting/);
    expect(await page.locator('#active-jobs td').nth(1).textContent()).toBe(`${HOSTILE} running`);
    expect(await page.locator('#failed-jobs td').nth(1).textContent()).toBe(`${HOSTILE} failing`);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).xss)).toBeUndefined();
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'adds no listeners, views or nodes refresh after refresh: a tab open for hours stays as it was (held)',
  async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    for (let i = 0; i < 3; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10', name: `j${i}` });
    await s.ticks(5);
    const context = await browser();
    const page = await context.newPage();
    await signIn(page, s);
    await page.locator('#frontier-chart svg').waitFor({ timeout: 30_000 });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const reading = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      const { metrics } = await cdp.send('Performance.getMetrics');
      const value = (name: string) => metrics.find((m) => m.name === name)!.value;
      return { listeners: value('JSEventListeners'), nodes: value('Nodes') };
    };
    // Read once two readings agree: the page's own 10 s round may be mid-way through a chart when read
    // (the old view let go, the new one not yet drawn), which a loaded machine made a failure once.
    const counts = async () => {
      for (let i = 0; i < 5; i++) await page.evaluate(() => (globalThis as any).boaDashboard.refresh());
      let last = await reading();
      for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const next = await reading();
        if (next.listeners === last.listeners) return next;
        last = next;
      }
      return last;
    };
    const first = await counts();
    // 30 refreshes more (5 minutes of the page's): as many listeners and about as many nodes (a chart
    // redrawn may be mid-way when counted).
    for (let i = 0; i < 5; i++) await counts();
    const last = await counts();
    expect(last.listeners).toBe(first.listeners);
    expect(last.nodes).toBeLessThan(first.nodes * 1.2);
    // Refreshes that overlap (the page's own round while another runs, as when boa is slow): each chart
    // is drawn once after the other, the view it replaces let go (before, the first's view was lost
    // unfinalized, its listeners held: this count grew by each overlap).
    for (let i = 0; i < 5; i++)
      await page.evaluate(() =>
        Promise.all([(globalThis as any).boaDashboard.refresh(), (globalThis as any).boaDashboard.refresh()]),
      );
    const overlapped = await counts();
    expect(overlapped.listeners).toBe(first.listeners);
    expect(await page.locator('#frontier-chart svg').count()).toBe(1);
    expect(await page.locator('#spend-chart svg').count()).toBe(1);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'shows 20 of a plan of thousands of classes, saying how many there are, the active jobs in sight',
  async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'mine' });
    await s.ticks(2);
    const page = await (await browser()).newPage();
    // The plan boa gives, with 3000 classes more (each a share of one width).
    let classCount = 0;
    await page.route('**/v1/plan', async (route) => {
      const plan = await (await route.fetch()).json();
      classCount = Object.keys(plan.widths).length + 3000;
      for (let i = 0; i < 3000; i++) plan.widths[`class-${i}`] = [{ share: 1, widths: [1] }];
      await route.fulfill({ json: plan });
    });
    await signIn(page, s);
    await page.locator('#widths table').waitFor({ timeout: 30_000 });
    // Before: 3000 rows and more, the active jobs some 60,000 pixels down the page.
    // (A class may have rows for more than one share.)
    const classes = await page.locator('#widths tbody tr td:first-child').allTextContents();
    expect(new Set(classes).size).toBe(20);
    expect(classes.length).toBeLessThan(40);
    expect(await page.locator('#widths .shown').textContent()).toBe(
      `Shown: the first 20 of ${classCount} classes (all: boa plan).`,
    );
    const top = await page.locator('#active-jobs').boundingBox();
    expect(top!.y).toBeLessThan(3000);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  "says what answered instead of boa: a page, a redirect, a 404 that is not boa's 'no plan'",
  async () => {
    const s = await service();
    const context = await browser();
    // The page's clock, moved on to each next refresh.
    await context.clock.install();
    const page = await context.newPage();
    await signIn(page, s);
    const atTop = async (route: Parameters<Page['route']>[1], paths = '**/v1/**') => {
      await page.unroute('**/v1/**');
      await page.route(paths, route);
      await page.clock.fastForward(10_000);
      return expect.poll(() => page.locator('#error').textContent(), { timeout: 30_000 });
    };
    // Before: "boa has not answered since ... (/v1/budget: 200 OK)".
    await (
      await atTop((route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>Sign in</p>' }))
    ).toContain("(/v1/budget: 200 OK, but not boa's JSON: a page from something in front of boa?)");
    // A proxy whose session ran out sending every call to its sign-in page. Before: each part of the
    // page "Cannot read properties of null", the 404 of where it was sent read as no plan.
    await (
      await atTop((route) => route.fulfill({ status: 302, headers: { location: `${s.url}/sso/sign-in` } }))
    ).toContain(
      `(/v1/budget: redirected to ${s.url}/sso/sign-in (404), not answered by boa: a proxy in front of it?)`,
    );
    // One call answered 404 (a path boa does not have): said in its place, not read as none.
    await (
      await atTop(
        (route) =>
          route.fulfill({
            status: 404,
            json: { error: { code: 'not_found', message: 'no route GET /v1/status' } },
          }),
        '**/v1/status',
      )
    ).toBe('boa: no route GET /v1/status');
    expect(await page.locator('#health').textContent()).toBe('could not show this: no route GET /v1/status');
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'says what boa answered when it answers every call with an error, not that it has not answered',
  async () => {
    const s = await service();
    const context = await browser();
    await context.clock.install();
    const page = await context.newPage();
    await signIn(page, s);
    const updated = (await page.locator('#updated').textContent())!.replace(/^updated /, '');
    const answering = (status: number, code: string, message: string) => async () => {
      await page.unroute('**/v1/**');
      await page.route('**/v1/**', (route) => route.fulfill({ status, json: { error: { code, message } } }));
      await page.clock.fastForward(10_000);
    };
    const atTop = () => expect.poll(() => page.locator('#error').textContent(), { timeout: 30_000 });
    const rest = `the figures shown are from ${updated}, not current; the page asks again every 10 s\\.$`;
    // Before: "boa has not answered since ... (boa is starting)", and so for a 500 and a 429.
    await answering(503, 'starting', 'boa is starting')();
    await atTop().toMatch(
      new RegExp(
        `^boa has answered every call with an error since \\S+Z \\(503: boa is starting\\): ${rest}`,
      ),
    );
    await answering(500, 'internal', 'internal error: disk full')();
    await atTop().toMatch(/ \(500: internal error: disk full\): /);
    await answering(429, 'too_many_requests', 'too many requests: wait a second')();
    await atTop().toMatch(/ \(429: too many requests: wait a second\): /);
    // No answer at all is still said as that.
    await page.unroute('**/v1/**');
    await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
    await page.clock.fastForward(10_000);
    await atTop().toMatch(new RegExp(`^boa has not answered since \\S+Z \\(Failed to fetch\\): ${rest}`));

    // Signing in while boa starts: what it answered, on the form.
    const fresh = await context.newPage();
    await fresh.route('**/v1/**', (route) =>
      route.fulfill({ status: 503, json: { error: { code: 'starting', message: 'boa is starting' } } }),
    );
    await fresh.goto(`${s.url}/`);
    await fresh.locator('#token').fill(s.token);
    await fresh.locator('#sign-in').click();
    await expect
      .poll(() => fresh.locator('#login-error').textContent(), { timeout: 30_000 })
      .toBe('The token could not be checked: boa answered 503: boa is starting');
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'says it is checking the token while a slow boa has not answered yet',
  async () => {
    const s = await service();
    const page = await (await browser()).newPage();
    let release = () => {};
    const answered = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/v1/**', async (route) => {
      await answered;
      await route.continue();
    });
    await page.goto(`${s.url}/`);
    await page.locator('#token').fill(s.token);
    await page.locator('#sign-in').click();
    // Before: the form as it was, nothing said, until boa answered (up to 30 s).
    await expect
      .poll(() => page.locator('#login-error').textContent(), { timeout: 10_000 })
      .toBe('Checking the token with boa...');
    release();
    await page.locator('#health span').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('#login').isVisible()).toBe(false);
  },
  120_000,
);
