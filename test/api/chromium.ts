import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/** Debian's chromium, which `npm test` installs when it is missing and it may (scripts/ensure-chromium.mjs). */
export const CHROMIUM = process.env.BOA_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The browsers' time zone: not UTC, and half an hour off it, so a time the page showed in the browser's
 * zone rather than in UTC (as the CLI and the API) would not match.
 */
export const BROWSER_ZONE = 'Asia/Kolkata';

export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  process.stderr.write(
    `dashboard tests skipped: no ${CHROMIUM} (npm test installs it as root: apt-get install -y chromium)\n`,
  );
}

/**
 * The dashboard tests' browser: headless Chromium with a fresh profile under `dir`, a desktop-wide
 * window, in BROWSER_ZONE.
 */
export async function launchDashboardBrowser(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: chromiumFlags,
    ...dashboardContextOptions,
  });
}

const dashboardContextOptions = { viewport: { width: 1400, height: 1000 }, timezoneId: BROWSER_ZONE };

/**
 * A fresh context (a profile of its own, as fresh as launchDashboardBrowser's) in one Chromium shared
 * by a file's tests: a launch costs seconds on a loaded machine. `close` ends that Chromium.
 */
export function sharedDashboardBrowser(): { context(): Promise<BrowserContext>; close(): Promise<void> } {
  let launched: Promise<Browser> | undefined;
  return {
    context: async () => {
      launched ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumFlags });
      return (await launched).newContext(dashboardContextOptions);
    },
    close: async () => {
      await (await launched)?.close();
    },
  };
}
