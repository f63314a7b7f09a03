#!/usr/bin/env node
/**
 * `npm test`'s pretest: the dashboard test drives Debian's Chromium (/usr/bin/chromium). When it is
 * missing and this machine can install it (root, apt-get), install it; CI machines start fresh. Where
 * it cannot, say so: the dashboard test is then skipped with the same hint. BOA_SKIP_CHROMIUM_INSTALL=1
 * skips the install; BOA_CHROMIUM points at another Chromium binary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';

const chromium = process.env.BOA_CHROMIUM ?? '/usr/bin/chromium';
const say = (line) => process.stderr.write(`ensure-chromium: ${line}\n`);

if (existsSync(chromium) || process.env.BOA_SKIP_CHROMIUM_INSTALL) process.exit(0);
const root = typeof process.getuid === 'function' && process.getuid() === 0;
if (process.platform !== 'linux' || !root || !existsSync('/usr/bin/apt-get')) {
  say(`no ${chromium}: the dashboard test will be skipped (install it: sudo apt-get install -y chromium)`);
  process.exit(0);
}
say('installing chromium for the dashboard test: apt-get update && apt-get install -y chromium');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [
  ['update', '-q'],
  ['install', '-y', '-q', 'chromium'],
]) {
  const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (run.status !== 0) {
    // Stops npm test (CI must not lose the dashboard test unseen), so say how to run the rest anyway.
    say(
      `apt-get ${args.join(' ')} failed (exit ${run.status}): the dashboard test cannot run; ` +
        'BOA_SKIP_CHROMIUM_INSTALL=1 npm test runs the others without it (offline, say)',
    );
    process.exit(1);
  }
}
if (!existsSync(chromium)) {
  say(`chromium installed, but ${chromium} is still missing`);
  process.exit(1);
}
say(`installed ${chromium}`);
