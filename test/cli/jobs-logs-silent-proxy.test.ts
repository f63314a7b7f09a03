/**
 * `boa jobs logs -f` against a real service through a connection that goes silent (test/helpers/
 * silent-proxy.ts): the service's keepalives hold a quiet job's follow open, and once nothing comes
 * for 3 of them the follow asks again from where it was, nothing lost or shown twice.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startSilentProxy } from '../helpers/silent-proxy.ts';
import { tickUntil } from '../api/dashboard/process-jobs.ts';
import { startProcessService } from './process-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a quiet job is followed on keepalives; a silent connection is followed again from where it was', async () => {
  const { s, dataDir } = await startProcessService(
    cleanups,
    { restartBackoffSeconds: 1, replicaCheckSeconds: 1, logKeepaliveSeconds: 0.5 },
    { followPollMs: 50 },
  );
  const go = join(dataDir, 'go');
  const script = `
    const fs = require('node:fs');
    console.log('first');
    const wait = setInterval(() => {
      if (!fs.existsSync(${JSON.stringify(go)})) return;
      clearInterval(wait);
      console.log('second');
      process.exit(0);
    }, 50);`;
  const made = await s.request('POST', '/v1/jobs', {
    class: 'cifar10',
    workload: { command: [process.execPath, '-e', script] },
  });
  const id = made.body.id as number;
  await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
  const proxy = await startSilentProxy(s.url);
  cleanups.unshift(proxy.close);
  let stderr = '';
  const run = s.boa(['jobs', 'logs', String(id), '-f'], { BOA_URL: proxy.url }, (said) => (stderr = said));
  await tickUntil(s, () => proxy.connections() > 0, 'the follow begun');
  await sleep(1000);
  const following = proxy.connections();
  // Quiet for more than 3 keepalive intervals: the keepalives hold it.
  await sleep(3000);
  expect(stderr).not.toMatch(/following it again/);
  expect(proxy.connections()).toBe(following);

  proxy.silence();
  writeFileSync(go, '');
  await tickUntil(
    s,
    () => /sent nothing for 1\.5 s; following it again from where it was/.test(stderr),
    'the follow asked again',
  );
  await tickUntil(s, () => proxy.connections() > following, 'asked again on a new connection');
  await tickUntil(s, () => s.service.job(id).state === 'done', 'done');
  const ended = await run;
  expect(ended.stdout).toBe('first\nsecond\n');
  expect(ended.status, ended.stderr).toBe(0);
}, 120_000);

it('a follower that does not ask for keepalives (curl) gets the log alone', async () => {
  const { s } = await startProcessService(cleanups, { logKeepaliveSeconds: 0.2 }, { followPollMs: 50 });
  const made = await s.request('POST', '/v1/jobs', {
    class: 'cifar10',
    workload: { command: [process.execPath, '-e', "console.log('fi\\0rst'); setInterval(() => {}, 1000);"] },
  });
  const id = made.body.id as number;
  await tickUntil(s, () => s.service.job(id).state === 'running', 'running');
  const read = async (headers: Record<string, string>) => {
    const stop = new AbortController();
    const res = await fetch(`${s.url}/v1/jobs/${id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${s.token}`, ...headers },
      signal: stop.signal,
    });
    const reader = res.body!.getReader();
    let body = Buffer.alloc(0);
    const reading = (async () => {
      for (;;) body = Buffer.concat([body, (await reader.read()).value!]);
    })().catch(() => undefined);
    // Quiet for 5 intervals after its line.
    await sleep(1000);
    stop.abort();
    await reading;
    return { keepalive: res.headers.get('boa-log-keepalive'), body: body.toString('latin1') };
  };
  await tickUntil(s, async () => (await read({})).body !== '', 'its line written');
  expect(await read({})).toEqual({ keepalive: null, body: 'fi\0rst\n' });
  const asked = await read({ 'boa-log-keepalive': 'true' });
  expect(asked.keepalive).toBe('0.2');
  expect(asked.body).toMatch(/^fi\0\0rst\n(\0k)+$/);
}, 120_000);
