/**
 * The dashboard's 10 s refresh against a slow service (found in review): one round of calls at a time,
 * an older round never draws over a newer one, and a round from a forgotten token's session neither
 * draws nor signs out the session that followed it. Each case failed before (27 calls outstanding at
 * once; the new job shown, then taken away; the login form back).
 */
import { afterEach, expect, it } from 'vitest';
import { startService } from '../../service/harness.ts';
import { type CallTimeout, loadDashboardScript } from './load-app.ts';

type Service = Awaited<ReturnType<typeof startService>>;
const services: Service[] = [];
// Calls a case holds back; released after it, so nothing is left pending.
const held: Array<() => void> = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  for (const s of services.splice(0)) await s.close();
});

it('does not start a new round of calls while the last one is still unanswered (slow service)', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  let slow = false;
  let inFlight = 0;
  let most = 0;
  const dash = loadDashboardScript(async (path, init) => {
    if (slow) {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => held.push(resolve));
      inFlight--;
    }
    return s.app.request(path, init);
  });
  await dash.start(s.token);
  slow = true;
  // Three refresh intervals (30 s) of a service that takes longer than that to answer.
  for (let i = 0; i < 3; i++) dash.refreshes.at(-1)!();
  await new Promise((r) => setTimeout(r, 50));
  expect(most).toBeLessThanOrEqual(12); // the page's 12 calls
});

it('does not draw an older round over a newer one', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  let hold = false;
  const dash = loadDashboardScript(async (path, init) => {
    // Answered as of when asked, delivered later (a slow proxy or network).
    const res = await s.app.request(path, init);
    if (hold) await new Promise<void>((resolve) => held.push(resolve));
    return res;
  });
  await dash.start(s.token);
  hold = true;
  dash.refreshes.at(-1)!(); // round 1: answered with no job yet, delivered late
  await new Promise((r) => setTimeout(r, 50));
  hold = false;
  await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'newjob' });
  await s.ticks(2);
  dash.refreshes.at(-1)!(); // round 2 (10 s later): sees the job
  await new Promise((r) => setTimeout(r, 200));
  const shownAfterRound2 = dash.element('active-jobs').innerHTML.includes('newjob');
  for (const release of held.splice(0)) release(); // round 1 lands last
  await new Promise((r) => setTimeout(r, 200));
  const shownAfterRound1 = dash.element('active-jobs').innerHTML.includes('newjob');
  // Once the page has shown the job, an older answer must not take it away again (round 2 may instead
  // be skipped while round 1 is unanswered), and the next round shows it.
  expect(shownAfterRound2 && !shownAfterRound1).toBe(false);
  dash.refreshes.at(-1)!();
  await expect
    .poll(() => dash.element('active-jobs').innerHTML.includes('newjob'), { timeout: 20_000 })
    .toBe(true);
});

it('a round started with a forgotten token does not sign out the session of the new one', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  let hold = false;
  let oldValid = true;
  const dash = loadDashboardScript(async (path, init) => {
    if (hold) await new Promise<void>((resolve) => held.push(resolve));
    const auth = init.headers.authorization;
    // "old" is accepted until rotated out; "new" is the token after the rotation.
    if (auth === 'Bearer new' || (auth === 'Bearer old' && oldValid))
      return s.app.request(path, { headers: { authorization: `Bearer ${s.token}` } });
    return new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'wrong token' } }), {
      status: 401,
    });
  });
  await dash.start('old');
  hold = true;
  dash.refreshes.at(-1)!(); // a round with "old", slow to answer
  await new Promise((r) => setTimeout(r, 20));
  hold = false;
  oldValid = false; // the token rotates
  dash.element('logout').fire('click'); // the operator signs in again with the new token
  dash.element('token').value = 'new';
  dash.element('login').fire('submit');
  await expect.poll(() => dash.storage.get('boa.operatorToken'), { timeout: 20_000 }).toBe('new');
  for (const release of held.splice(0)) release(); // the old round's answers land: 401
  await new Promise((r) => setTimeout(r, 100));
  expect(dash.element('login').classes.has('hidden')).toBe(true);
  expect(dash.storage.get('boa.operatorToken')).toBe('new');
});

it('gives up on a call unanswered for 30 s, says so, and the refresh goes on', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  let hang = false;
  const dash = loadDashboardScript(async (path, init) => {
    if (!hang) return s.app.request(path, init);
    // A connection that never answers: only the page's own time limit ends it.
    return new Promise((_, reject) =>
      init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }),
    );
  });
  await dash.start(s.token);
  hang = true;
  const asked = dash.timeouts.length;
  dash.refreshes.at(-1)!();
  dash.refreshes.at(-1)!(); // skipped: the last round is unanswered
  expect(dash.timeouts.length - asked).toBe(12);
  expect(dash.timeouts.every((t) => t.ms === 30_000)).toBe(true);
  for (const t of dash.timeouts.slice(asked)) t.expire();
  await expect
    .poll(() => dash.element('error').textContent, { timeout: 20_000 })
    .toMatch(/boa has not answered since .*timed out/);
  hang = false;
  dash.refreshes.at(-1)!();
  // (The charts cannot be drawn in this fake page, which the line says; what matters is that boa answered.)
  await expect
    .poll(() => dash.element('error').textContent, { timeout: 20_000 })
    .not.toMatch(/has not answered/);
});

it('draws each part as its calls answer: a frontier that does not answer holds up only its own chart', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  let holdFrontier = false;
  let frontierAsked = 0;
  const dash = loadDashboardScript(async (path, init) => {
    if (path === '/v1/frontier' && holdFrontier) {
      frontierAsked++;
      // The frontier recomputed for longer than the test runs: answered only once the test ends.
      await new Promise<void>((resolve) => held.push(resolve));
    }
    return s.app.request(path, init);
  });
  await dash.start(s.token);
  holdFrontier = true;
  dash.refreshes.at(-1)!(); // the frontier asked for, and not answered
  const made = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'submitted-meanwhile' });
  await s.ticks(2);
  dash.refreshes.at(-1)!(); // 10 s on: every other call answers
  await expect
    .poll(() => dash.element('active-jobs').innerHTML, { timeout: 20_000 })
    .toContain('<td>submitted-meanwhile</td>');
  expect(dash.element('jobs').innerHTML).toMatch(/<td>(running|waiting)<\/td><td>1<\/td>/);
  // One request for it in flight, however many rounds pass; its chart marked stale and said so at the
  // top, the other parts not.
  dash.refreshes.at(-1)!();
  await expect
    .poll(() => dash.element('error').textContent, { timeout: 20_000 })
    .toMatch(/\/v1\/frontier has not answered since \S+Z \(the frontier chart: from \S+Z\)$/);
  // (The spend chart cannot be drawn in this fake page, which the line says too.)
  expect(dash.element('error').textContent.match(/ has not answered/g)).toHaveLength(1);
  expect(frontierAsked).toBe(1);
  expect(dash.element('frontier-chart').classes.has('stale')).toBe(true);
  expect(dash.element('active-jobs').classes.has('stale')).toBe(false);
  expect(made.status).toBe(201);
  // Once it answers, its chart is drawn again and no longer stale; the line at the top says nothing slow.
  holdFrontier = false;
  for (const release of held.splice(0)) release();
  await expect
    .poll(() => dash.element('frontier-chart').classes.has('stale'), { timeout: 20_000 })
    .toBe(false);
  dash.refreshes.at(-1)!();
  await expect.poll(() => dash.element('error').textContent, { timeout: 20_000 }).not.toMatch(/frontier/);
});

it('says a frontier slower than the 30 s limit in the same words round after round (read out once)', async () => {
  const s = await startService({ config: { priorRates: { cifar10: 6 } } });
  services.push(s);
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  let hang = false;
  let frontierTimeout: CallTimeout | undefined;
  const dash: ReturnType<typeof loadDashboardScript> = loadDashboardScript(async (path, init) => {
    if (path !== '/v1/frontier' || !hang) return s.app.request(path, init);
    // The call's time limit, asked for just before it is sent; never answered: only that limit ends it.
    frontierTimeout = dash.timeouts.at(-1);
    return new Promise((_, reject) =>
      init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }),
    );
  });
  await dash.start(s.token);
  hang = true;
  const round = async () => {
    const asked = dash.timeouts.length;
    dash.refreshes.at(-1)!();
    // Every call it sent answered but the frontier: the line at the top is written then.
    await new Promise((r) => setTimeout(r, 300));
    return dash.timeouts.length - asked;
  };
  expect(await round()).toBe(12); // the frontier sent, and never answered
  const said: string[] = [];
  for (let cycle = 0; cycle < 2; cycle++) {
    expect(await round()).toBe(11); // all but the frontier, still in flight
    frontierTimeout!.expire();
    await new Promise((r) => setTimeout(r, 100));
    expect(await round()).toBe(12); // the frontier sent again
    said.push(dash.element('error').textContent);
    expect(await round()).toBe(11);
    said.push(dash.element('error').textContent);
  }
  // Once it has timed out: the same words each round, which a screen reader reads once.
  expect(said[0]).toMatch(/\/v1\/frontier has not answered since \S+Z \(the frontier chart: not shown\)/);
  expect(new Set(said)).toEqual(new Set([said[0]]));
});
