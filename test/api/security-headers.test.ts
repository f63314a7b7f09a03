/**
 * Every answer of boa's says `x-content-type-options: nosniff` (src/api/security-headers.ts): routes,
 * errors, the dashboard's page and scripts, and the 503 every request gets while boa starts.
 */
import { afterEach, expect, it } from 'vitest';
import { listen } from '../../src/service/startup.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('is said on answers, refusals and errors alike', async () => {
  const s = await startService();
  cleanups.push(() => s.close());
  const auth = { authorization: `Bearer ${s.token}` };
  const answers = [
    await s.app.request('/healthz'),
    await s.app.request('/v1/status', { headers: auth }),
    await s.app.request('/v1/status'), // 401
    await s.app.request('/v1/jobs/999', { headers: auth }), // 404 of a route
    await s.app.request('/no-such-route'), // notFound
    await s.app.request('/v1/jobs?limit=abc', { headers: auth }), // 400
    await s.app.request('/'),
    await s.app.request('/dashboard/app.js'),
    await s.app.request('/openapi.json'),
  ];
  expect(answers.map((res) => res.status)).toEqual([200, 200, 401, 404, 404, 400, 200, 200, 200]);
  for (const res of answers) expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
});

it('is said on the 503 while boa starts', async () => {
  const { server, port } = await listen('127.0.0.1', 0);
  cleanups.push(() => new Promise<void>((closed) => server.close(() => closed())));
  const res = await fetch(`http://127.0.0.1:${port}/v1/status`);
  expect(res.status).toBe(503);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
});
