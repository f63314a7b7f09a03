/**
 * The dashboard's job log in headless Chromium (as dashboard.test.ts): a running job's id opens its
 * output below the active jobs, lines appear as the job writes them, Close stops following.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { startProcessService } from '../cli/process-service.ts';
import { CHROMIUM, chromiumFlags, haveChromium } from './chromium.ts';

const cleanups: Array<() => Promise<void>> = [];
const temp = mkdtempSync(join(tmpdir(), 'boa-dashboard-log-'));
let context: BrowserContext | undefined;
afterAll(async () => {
  await context?.close();
  for (const fn of cleanups.splice(0)) await fn();
  rmSync(temp, { recursive: true, force: true });
});

it.skipIf(!haveChromium)(
  "shows a running job's output as it is written, until closed",
  async () => {
    const { s } = await startProcessService(cleanups);
    const script = "let i = 0; setInterval(() => console.log('line ' + ++i), 100);";
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      name: 'printer',
      workload: { command: [process.execPath, '-e', script] },
    });
    // A job that launches itself has no log here: its id is plain text.
    await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'self-launched' });
    for (let i = 0; i < 100 && s.service.job(body.id).state !== 'running'; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
    context = await chromium.launchPersistentContext(join(temp, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: chromiumFlags,
      viewport: { width: 1400, height: 1000 },
    });
    const page = await context.newPage();
    await page.goto(`${s.url}/`);
    await page.locator('#token').fill(s.token);
    await page.locator('#sign-in').click();
    const open = page.locator(`#active-jobs button.job-log[data-job="${body.id}"]`);
    await open.waitFor({ timeout: 30_000 });
    expect(await page.locator('#active-jobs button.job-log').count()).toBe(1);
    expect(await page.locator('#log-section').isVisible()).toBe(false);
    await open.click();
    await expect.poll(() => page.locator('#log-text').textContent(), { timeout: 30_000 }).toMatch(/line 3\n/);
    const seen = (await page.locator('#log-text').textContent()) ?? '';
    const last = Number(/line (\d+)\n$/.exec(seen)?.[1]);
    // More comes without a reload.
    await expect
      .poll(() => page.locator('#log-text').textContent(), { timeout: 30_000 })
      .toContain(`line ${last + 3}\n`);
    expect(await page.locator('#log-title').textContent()).toMatch(
      new RegExp(`Job ${body.id}: .*generation \\d+`),
    );
    await page.locator('#log-close').click();
    expect(await page.locator('#log-section').isVisible()).toBe(false);
    await page.close();
  },
  120_000,
);
