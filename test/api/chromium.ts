import { existsSync } from 'node:fs';

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

export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  process.stderr.write(
    `dashboard tests skipped: no ${CHROMIUM} (npm test installs it as root: apt-get install -y chromium)\n`,
  );
}
