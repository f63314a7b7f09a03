/**
 * The dashboard's job log in headless Chromium (as dashboard.test.ts), against a service running real
 * local processes: a job's id opens its output below the active jobs; lines appear as the job writes
 * them; it is followed across its generations (each after a separator line), saying what it waits for
 * between them and how the job ended; a stream cut off goes on where it broke off; Close stops it all.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, expect, it } from 'vitest';
import { when } from '../../src/cli/format.ts';
import { startProcessService } from '../cli/process-service.ts';
import { startSilentProxy } from '../helpers/silent-proxy.ts';
import { haveChromium, launchDashboardBrowser } from './chromium.ts';
import { submitScript, tickUntil } from './dashboard/process-jobs.ts';

const cleanups: Array<() => Promise<void>> = [];
const temp = mkdtempSync(join(tmpdir(), 'boa-dashboard-log-'));
let context: BrowserContext | undefined;
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});
afterAll(async () => {
  await context?.close();
  rmSync(temp, { recursive: true, force: true });
});

type Service = Awaited<ReturnType<typeof startProcessService>>['s'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A service whose runs' exits are seen within a second and whose restarts wait a tick (its clock is the test's). */
async function service(config: Record<string, unknown> = {}) {
  return startProcessService(
    cleanups,
    { restartBackoffSeconds: 1, replicaCheckSeconds: 1, ...config },
    { followPollMs: 50 },
  );
}

/** Waits, the service's clock standing still, until `done` says so. */
async function waitUntil(done: () => boolean, what: string) {
  for (let i = 0; i < 600 && !done(); i++) await sleep(50);
  if (!done()) throw new Error(`never: ${what}`);
}

/** The dashboard signed in, and its job's output opened from its id in the active jobs. */
async function openLog(s: Service, id: number): Promise<Page> {
  context ??= await launchDashboardBrowser(join(temp, 'profile'));
  const page = await context.newPage();
  // Closed before its service, even when a test fails: a log it still follows would hold the service open.
  cleanups.unshift(() => page.close());
  await page.goto(`${s.url}/`);
  await page.locator('#token').fill(s.token);
  await page.locator('#sign-in').click();
  const open = page.locator(`#active-jobs button.job-log[data-job="${id}"]`);
  await open.waitFor({ timeout: 30_000 });
  expect(await page.locator('#log-section').isVisible()).toBe(false);
  await open.click();
  return page;
}

const text = (page: Page) => page.locator('#log-text').textContent();
const status = (page: Page) => page.locator('#log-status').textContent();
const lines = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${prefix} ${from + i}\n`).join('');
/** A script's statement that waits for a file the test writes, then runs `then`. */
const whenFile = (file: string, then: string, timer = 'wait') =>
  `const ${timer} = setInterval(() => { if (!fs.existsSync(${JSON.stringify(file)})) return; clearInterval(${timer}); ${then} }, 50);`;

it.skipIf(!haveChromium)(
  "shows a running job's output as it is written, until closed",
  async () => {
    const { s } = await service();
    const script = "let i = 0; setInterval(() => console.log('line ' + ++i), 100);";
    const id = await submitScript(s, 'printer', script);
    // A job that launches itself has no log here: its id is plain text.
    await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'self-launched' });
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const page = await openLog(s, id);
    expect(await page.locator('#active-jobs button.job-log').count()).toBe(1);
    // The focus goes to the output opened (a keyboard or screen reader's user is told), and back to the
    // job's id at Close (before: it stayed on the id, nothing said the output had opened below).
    const focused = (what: string) => page.evaluate(`document.activeElement?.${what} ?? null`);
    expect(await focused('id')).toBe('log-heading');
    expect(await page.locator('#log-status').getAttribute('role')).toBe('status');
    await expect.poll(() => text(page), { timeout: 30_000 }).toMatch(/line 3\n/);
    const seen = (await text(page)) ?? '';
    const last = Number(/line (\d+)\n$/.exec(seen)?.[1]);
    // More comes without a reload.
    await expect.poll(() => text(page), { timeout: 30_000 }).toContain(`line ${last + 3}\n`);
    expect(await page.locator('#log-title').textContent()).toMatch(
      new RegExp(`Job ${id}: .*generation \\d+`),
    );
    await page.locator('#log-close').click();
    expect(await page.locator('#log-section').isVisible()).toBe(false);
    expect(await page.evaluate('document.activeElement?.dataset?.job ?? null')).toBe(String(id));
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'follows a job from before it runs, through a restart (its backoff said), to its end',
  async () => {
    const { s, dataDir } = await service();
    const failedOnce = join(dataDir, 'failed-once');
    const go1 = join(dataDir, 'go-1');
    const go2 = join(dataDir, 'go-2');
    // The first run writes 3 lines, a 4th when told, and fails; the second does the same and is done.
    const script = `
      const fs = require('node:fs');
      const again = fs.existsSync(${JSON.stringify(failedOnce)});
      const word = again ? 'second' : 'first';
      for (let i = 1; i <= 3; i++) console.log(word + ' ' + i);
      const go = again ? ${JSON.stringify(go2)} : ${JSON.stringify(go1)};
      const wait = setInterval(() => {
        if (!fs.existsSync(go)) return;
        clearInterval(wait);
        console.log(word + ' 4');
        if (!again) fs.writeFileSync(${JSON.stringify(failedOnce)}, '');
        process.exit(again ? 0 : 1);
      }, 50);`;
    const id = await submitScript(s, 'restarted', script);
    // Opened while it waits: no log yet, said why it waits in the CLI's words.
    const page = await openLog(s, id);
    await expect
      .poll(() => status(page), { timeout: 30_000 })
      .toMatch(new RegExp(`^job ${id} \\(restarted\\): waiting for (a plan|the next tick)$`));
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('first', 1, 3));
    const first = s.service.job(id).generation;
    expect(await page.locator('#log-title').textContent()).toBe(
      `Job ${id}: the output of rank 0, generation ${first}`,
    );

    // Its run fails; the restart waits for the service's clock, which stands still until the next tick.
    writeFileSync(go1, '');
    await waitUntil(() => s.service.job(id).restarts === 1, 'the failure seen');
    const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
    await expect
      .poll(() => status(page), { timeout: 30_000 })
      .toBe(
        // In UTC as the CLI prints it, though the browser is in another zone.
        `job ${id} (restarted): its run ended (exit 1: ${job.failureReason}); restart 1 at ${when(job.restartNotBefore)}`,
      );
    expect(await text(page)).toBe(lines('first', 1, 4));

    await tickUntil(s, async () => /second 3\n/.test((await text(page)) ?? ''), 'the second run shown');
    const second = s.service.job(id).generation;
    expect(second).toBeGreaterThan(first);
    const both = `${lines('first', 1, 4)}--- job ${id}, generation ${second} ---\n${lines('second', 1, 3)}`;
    expect(await text(page)).toBe(both);
    expect(await page.locator('#log-title').textContent()).toBe(
      `Job ${id}: the output of rank 0, generation ${second}`,
    );
    expect(await status(page)).toMatch(/^following generation \d+/);

    writeFileSync(go2, '');
    await expect.poll(() => status(page), { timeout: 30_000 }).toBe(`job ${id} (restarted): done`);
    expect(await text(page)).toBe(`${both}second 4\n`);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  "ends saying how a failed job failed, every run's output shown",
  async () => {
    const { s, dataDir } = await service({ maxRestarts: 1 });
    const go = join(dataDir, 'go');
    // Each run says its generation and its rank 0 exits 3, the first only once told; any other rank
    // waits to be stopped, so rank 0 is the one that failed (a loaded run had rank 1's exit seen first).
    const script = `
      const fs = require('node:fs');
      console.log('run ' + process.env.BOA_GENERATION);
      if (process.env.NODE_RANK !== '0') setInterval(() => undefined, 1000);
      else if (fs.existsSync(${JSON.stringify(go)})) process.exit(3);
      else { ${whenFile(go, 'process.exit(3);')} }`;
    const id = await submitScript(s, 'doomed', script);
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const first = s.service.job(id).generation;
    const page = await openLog(s, id);
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(`run ${first}\n`);
    writeFileSync(go, '');
    await tickUntil(s, () => s.service.job(id).state === 'failed', 'failed');
    const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
    expect(job.exitCode).toBe(3);
    // With the stopping note when the follower looked before its other ranks were gone (as logs -f).
    const stoppingNote = /, stopping: \d+ replicas? still running, \d+ GPUs? held \([^)]*\)$/;
    await expect
      .poll(async () => (await status(page))?.replace(stoppingNote, ''), { timeout: 30_000 })
      .toBe(`job ${id} (doomed): failed (exit 3: ${job.failureReason})`);
    // Its restart is the next generation (an ended job shows the one after its last run).
    const second = first + 1;
    expect(await text(page)).toBe(`run ${first}\n--- job ${id}, generation ${second} ---\nrun ${second}\n`);

    // Gone from the active jobs, it is listed with the failed ones: why, and the command for its output
    // (found in a trial: the page had only "failed 1" in the jobs by state).
    await page.evaluate(() => (globalThis as any).boaDashboard.refresh());
    const row = page.locator('#failed-jobs tbody tr');
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    const cells = (await row.innerText()).split('\t').map((c) => c.trim());
    expect(cells).toEqual([
      String(id),
      'doomed',
      'cifar10',
      'failed',
      when(job.finishedAt),
      `exit 3: ${job.failureReason}`,
      `boa jobs logs ${id}`,
    ]);
    // Its other ranks, stopped within their grace, hold their GPUs: it is listed among the active jobs,
    // failed and stopping, until they are gone (stopping-jobs.test.ts), then no longer.
    await expect
      .poll(
        async () => {
          await page.evaluate(() => (globalThis as any).boaDashboard.refresh());
          return page.locator('#active-jobs').textContent();
        },
        { timeout: 60_000 },
      )
      .toBe('No job is waiting or running.');
    // Its id opens its last run's output.
    await page.locator('#log-close').click();
    await page.locator(`#failed-jobs button.job-log[data-job="${id}"]`).click();
    await expect.poll(() => text(page), { timeout: 30_000 }).toContain(`run ${second}\n`);
    await expect
      .poll(() => status(page), { timeout: 30_000 })
      .toBe(`job ${id} (doomed): failed (exit 3: ${job.failureReason})`);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'goes on from where its stream broke off; Close stops following, between runs too',
  async () => {
    const { s, dataDir } = await service();
    const go1 = join(dataDir, 'go-1');
    const go2 = join(dataDir, 'go-2');
    const script = `
      const fs = require('node:fs');
      for (let i = 1; i <= 5; i++) console.log('line ' + i);
      ${whenFile(go1, `for (let i = 6; i <= 10; i++) console.log('line ' + i); ${whenFile(go2, 'process.exit(1);', 'wait2')}`)}`;
    const id = await submitScript(s, 'cut', script);
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const asked: Array<{ at: number; url: string }> = [];
    const page = await openLog(s, id);
    page.on('request', (r) => {
      if (r.url().includes(`/v1/jobs/${id}`)) asked.push({ at: Date.now(), url: r.url() });
    });
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 5));
    const logRequests = () => asked.filter((a) => a.url.includes('/logs?')).length;
    const before = logRequests();

    // Every connection dropped, as a service killed mid-answer; the job writes on meanwhile.
    s.cutConnections();
    writeFileSync(go1, '');
    await expect.poll(logRequests, { timeout: 30_000 }).toBeGreaterThan(before);
    // Nothing lost, nothing twice.
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 10));

    // Its run fails; between runs the page asks after the job until Close, and not after.
    writeFileSync(go2, '');
    await waitUntil(() => s.service.job(id).restarts === 1, 'the failure seen');
    await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/its run ended \(exit 1/);
    const polling = asked.length;
    await expect.poll(() => asked.length, { timeout: 10_000 }).toBeGreaterThan(polling);
    await page.locator('#log-close').click();
    expect(await page.locator('#log-section').isVisible()).toBe(false);
    const closedAt = Date.now();
    // Longer than its poll (2 s): a wait left running would have asked again by then.
    await sleep(3000);
    expect(asked.filter((a) => a.at > closedAt + 100)).toEqual([]);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'a quiet log is held open by keepalives; one whose connection goes silent is followed again from where it was',
  async () => {
    // Taken as dropped after 3 intervals without a byte: 3 s, so a loaded machine's stall of a second or
    // two (the service or the browser) is not taken for a dropped connection.
    const { s, dataDir } = await service({ logKeepaliveSeconds: 1 });
    const go = join(dataDir, 'go');
    const script = `
      const fs = require('node:fs');
      for (let i = 1; i <= 3; i++) console.log('line ' + i);
      ${whenFile(go, "for (let i = 4; i <= 6; i++) console.log('line ' + i); setInterval(() => {}, 1000);")}`;
    const id = await submitScript(s, 'quiet', script);
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const proxy = await startSilentProxy(s.url);
    cleanups.unshift(proxy.close); // before the service: its silenced connections would hold it open
    const page = await openLog({ ...s, url: proxy.url }, id);
    const logRequests: string[] = [];
    page.on('request', (r) => void (r.url().includes(`/v1/jobs/${id}/logs?`) && logRequests.push(r.url())));
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 3));
    const followed = logRequests.length;
    // Quiet for more than 3 keepalive intervals: not taken as dropped. Its status says so at once; asked
    // again only after the follow's 2 s pause, which a look at the requests alone missed (it passed
    // with no keepalive reaching the page).
    await sleep(4500);
    expect(await status(page)).toMatch(/^following generation \d+: lines appear as the job writes them$/);
    expect(logRequests.length).toBe(followed);

    proxy.silence(/\/logs\?/);
    writeFileSync(go, '');
    await expect.poll(() => logRequests.length, { timeout: 30_000 }).toBeGreaterThan(followed);
    const resumed = new URL(logRequests[followed]!).searchParams.get('skip');
    expect(resumed).toBe(String(lines('line', 1, 3).length));
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 6));
    await expect.poll(() => status(page), { timeout: 30_000 }).toMatch(/following generation/);
  },
  120_000,
);

it.skipIf(!haveChromium)(
  'asks again when a request of the follow gets no answer at all',
  async () => {
    const { s, dataDir } = await service();
    const go = join(dataDir, 'go');
    const script = `
      const fs = require('node:fs');
      for (let i = 1; i <= 3; i++) console.log('line ' + i);
      ${whenFile(go, "for (let i = 4; i <= 6; i++) console.log('line ' + i); setInterval(() => {}, 1000);")}`;
    const id = await submitScript(s, 'unanswered', script);
    await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
    const page = await openLog(s, id);
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 3));
    // The page's timers from here on are Playwright's fake clock, so the 30 s the follow waits for an
    // answer is skipped, not waited for (it runs on in real time otherwise).
    await page.clock.install();
    // The next log request is sent and never answered, as on a connection dropped without a word.
    let held = 0;
    await page.route(`**/v1/jobs/${id}/logs?**`, (route) => {
      held += 1;
      if (held > 1) return route.continue();
    });
    s.cutConnections();
    writeFileSync(go, '');
    await expect.poll(() => held, { timeout: 30_000 }).toBe(1);
    await page.clock.fastForward(30_000);
    // Before: "following generation 1" for ever, lines 4 to 6 never shown.
    await expect
      .poll(() => status(page), { timeout: 60_000 })
      .toMatch(/^boa did not answer \(no answer in 30 s\); trying again/);
    await expect.poll(() => text(page), { timeout: 30_000 }).toBe(lines('line', 1, 6));
    expect(held).toBe(2);
  },
  180_000,
);
