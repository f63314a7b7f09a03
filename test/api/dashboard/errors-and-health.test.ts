/**
 * What the page says when something fails, in node (load-app.ts): an answer that is not boa JSON, one
 * call or /v1/status failing, a service that stops answering (the stale figures, said once), and the
 * health line (the ticks, the planner's, node group's and executor's errors).
 */
import { describe, expect, it } from 'vitest';
import { servicesClosedAfterEach } from './app-service.ts';
import { loadDashboardScript } from './load-app.ts';

const service = servicesClosedAfterEach();

describe('errors', () => {
  it('names the status when an answer is not boa JSON (a proxy in front answering 502)', async () => {
    const requested: string[] = [];
    const dash = loadDashboardScript(async (path) => {
      requested.push(path);
      return new Response('<html><body><h1>502 Bad Gateway</h1></body></html>', {
        status: 502,
        statusText: 'Bad Gateway',
        headers: { 'content-type': 'text/html' },
      });
    });
    await expect(dash.api('/v1/budget', 'token')).rejects.toThrow('/v1/budget: 502 Bad Gateway');
    // Nothing answered: the token could not be checked, so it is not kept and the form says why.
    await dash.start('token');
    expect(requested).toContain('/v1/status');
    expect(dash.element('login-error').textContent).toMatch(
      /^The token could not be checked: \/v1\/\S+: 502 Bad Gateway$/,
    );
    expect(dash.storage.get('boa.operatorToken')).toBeUndefined();
    expect(dash.element('dashboard').classes.has('hidden')).toBe(true);
  });

  it('draws every section whose calls answered when one call fails, and says which failed where', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' });
    await s.ticks(2);
    const dash = loadDashboardScript(async (path, init) =>
      path === '/v1/frontier'
        ? new Response(
            JSON.stringify({ error: { code: 'internal', message: 'internal error; see the service log' } }),
            {
              status: 500,
              headers: { 'content-type': 'application/json' },
            },
          )
        : s.app.request(path, init),
    );
    await dash.refresh(s.token);
    expect(dash.element('numbers').innerHTML).toContain('budget-value');
    expect(dash.element('active-jobs').innerHTML).toContain('<td>a</td>');
    // Its GPU-hours booked so far, as the API gives them (gpuHours), beside its GPUs.
    expect(dash.element('active-jobs').innerHTML).toMatch(/<th>GPUs<\/th><th>GPU-h<\/th>/);
    expect(dash.element('active-jobs').innerHTML).toMatch(/<td>\d+\.\d\d<\/td>/);
    expect(dash.element('widths').innerHTML).toMatch(/^<p>plan #\d+/);
    expect(dash.element('frontier-chart').innerHTML).toBe(
      '<p class="error">could not show this: internal error; see the service log</p>',
    );
    expect(dash.element('error').textContent).toContain('internal error; see the service log');
  });
});

describe('a failing /v1/status', () => {
  it('blanks the parts drawn from it, not the jobs lists, which only lose their counts', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.service.planner.idle();
    await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'listed-anyway' });
    await s.ticks(2);
    const refusal = JSON.stringify({ error: { code: 'internal', message: 'internal error; see the log' } });
    const dash = loadDashboardScript(async (path, init) =>
      path === '/v1/status'
        ? new Response(refusal, { status: 500, headers: { 'content-type': 'application/json' } })
        : s.app.request(path, init),
    );
    await dash.refresh(s.token);
    const failed = '<p class="error">could not show this: internal error; see the log</p>';
    for (const id of ['health', 'numbers', 'jobs', 'nodes'])
      expect(dash.element(id).innerHTML, id).toBe(failed);
    // Before: these two were blanked the same way, the jobs hidden for the want of their counts.
    expect(dash.element('active-jobs').innerHTML).toContain('<td>listed-anyway</td>');
    expect(dash.element('failed-jobs').innerHTML).toBe('<p>No job has failed.</p>');
  });

  it('leaves a full list saying that there may be more', () => {
    const dash = loadDashboardScript();
    const job = (id: number) => ({
      id,
      class: 'cifar10',
      state: 'failed',
      width: 0,
      statEpoch: 0,
      restarts: 0,
      submittedAt: 0,
      exitCode: 1,
      failureReason: 'rank 0 exited 1',
      workload: null,
    });
    dash.renderActiveJobs(
      Array.from({ length: 20 }, (_, i) => ({ ...job(i + 1), state: 'running', width: 1 })),
      [],
      undefined,
    );
    expect(dash.element('active-jobs').innerHTML).toContain(
      'Shown: the newest 20 running (how many in all is not known now)',
    );
    dash.renderFailedJobs(
      Array.from({ length: 5 }, (_, i) => job(i + 1)),
      undefined,
    );
    expect(dash.element('failed-jobs').innerHTML).toContain(
      'the 5 that ended last (how many in all is not known now); ',
    );
  });
});

describe('a service that stops answering', () => {
  /** The dashboard started on a service whose requests fail, as a dropped network does, while `down`. */
  async function dashboardThatMayFail() {
    const s = await service();
    let down = false;
    const dash = loadDashboardScript(async (path, init) => {
      if (down) throw new TypeError('Failed to fetch');
      return s.app.request(path, init);
    });
    await dash.start(s.token);
    return { dash, setDown: (value: boolean) => (down = value) };
  }

  it('says so at the top, with the time of the figures still shown, and clears once it answers', async () => {
    const { dash, setDown } = await dashboardThatMayFail();
    const updated = /^updated (\S+)$/.exec(dash.element('updated').textContent)![1];
    setDown(true);
    dash.refreshes.at(-1)!();
    await expect
      .poll(() => dash.element('error').textContent, { timeout: 20_000 })
      .toMatch(
        new RegExp(
          `^boa has not answered since \\S+Z \\(Failed to fetch\\): the figures shown are from ${updated}, not current; the page asks again every 10 s\\.$`,
        ),
      );
    // What is shown is greyed as stale, every part of it (before: the figures looked current).
    const stale = () =>
      ['numbers', 'active-jobs', 'spend-chart', 'frontier-chart'].filter((id) =>
        dash.element(id).classes.has('stale'),
      );
    expect(stale()).toHaveLength(4);
    setDown(false);
    dash.refreshes.at(-1)!();
    // Answered again (the charts cannot draw without a DOM here, which the line may say instead).
    await expect
      .poll(() => dash.element('error').textContent, { timeout: 20_000 })
      .not.toMatch(/not answered/);
    expect(stale()).toEqual([]);
  });

  it('is written once while boa stays down, not again each refresh (a screen reader reads each write)', async () => {
    const { dash, setDown } = await dashboardThatMayFail();
    // Each write of the alert's text counted, as a screen reader would announce it.
    const error = dash.element('error');
    const written: string[] = [];
    let text = error.textContent;
    Object.defineProperty(error, 'textContent', {
      get: () => text,
      set: (value: string) => void written.push((text = value)),
    });
    setDown(true);
    dash.refreshes.at(-1)!();
    await expect.poll(() => written.length, { timeout: 20_000 }).toBe(1);
    dash.refreshes.at(-1)!();
    dash.refreshes.at(-1)!();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^boa has not answered since /);
  });

  it('is no longer said once the login form shows (boa back with a rotated token)', async () => {
    const s = await service();
    let mode: 'up' | 'down' | 'rotated' = 'up';
    const dash = loadDashboardScript(async (path, init) => {
      if (mode === 'down') throw new TypeError('Failed to fetch');
      if (mode === 'rotated') return new Response('{}', { status: 401 });
      return s.app.request(path, init);
    });
    await dash.start(s.token);
    mode = 'down';
    dash.refreshes.at(-1)!();
    await expect.poll(() => dash.element('error').textContent, { timeout: 20_000 }).toMatch(/not answered/);
    mode = 'rotated';
    dash.refreshes.at(-1)!();
    await expect
      .poll(() => dash.element('login-error').textContent, { timeout: 20_000 })
      .toMatch(/no longer accepted/);
    expect(dash.element('login').classes.has('hidden')).toBe(false);
    expect(dash.element('error').textContent).toBe('');
  });

  it('is said above the figures, not below the last section', async () => {
    const html = await (await (await service()).app.request('/')).text();
    expect(html.indexOf('id="error"')).toBeGreaterThan(0);
    expect(html.indexOf('id="error"')).toBeLessThan(html.indexOf('id="dashboard"'));
  });
});

describe('the health line', () => {
  const status = (fields: Record<string, unknown> = {}) => ({
    lastTickAt: '2026-11-01T12:00:00.000Z',
    tickSeconds: 60,
    plannerError: null,
    nodeGroup: { waitingReason: null, issues: [] },
    ...fields,
  });
  const at = Date.parse('2026-11-01T12:00:00.000Z');

  it('shows the last tick, and flags it once three ticks are missed', () => {
    const dash = loadDashboardScript();
    dash.renderHealth(status(), at + 90_000);
    // In UTC, as the CLI prints times (the page in a browser elsewhere: ../dashboard.test.ts).
    expect(dash.element('health').innerHTML).toBe('<span class="">last tick 2026-11-01T12:00:00Z</span>');
    dash.renderHealth(status(), at + 181_000);
    expect(dash.element('health').innerHTML).toMatch(
      /^<span class="over">no tick since 2026-11-01T12:00:00Z \(3\.0 min ago, every 60 s expected\): the scheduler is failing/,
    );
  });

  it('is read out by a screen reader when the health changes, not at each tick nor each refresh while late', async () => {
    // The page's live regions, as served: a screen reader reads out what is written to one of them.
    const html = await (await (await service()).app.request('/')).text();
    const live = (html.match(/<[^>]+>/g) ?? [])
      .filter((tag) => /\brole="(status|alert)"|\baria-live="(polite|assertive)"/.test(tag))
      .map((tag) => /\bid="([^"]+)"/.exec(tag)![1]!);
    expect(live).toContain('error');
    const dash = loadDashboardScript();
    const readOut: string[] = [];
    for (const id of live) {
      const element = dash.element(id);
      for (const field of ['innerHTML', 'textContent'] as const) {
        let value = element[field];
        Object.defineProperty(element, field, {
          get: () => value,
          set: (written: string) => void readOut.push((value = written)),
        });
      }
    }
    const tickedAt = (seconds: number) => status({ lastTickAt: new Date(at + seconds * 1000).toISOString() });
    // Three ticks on time, each refreshed 30 s after it; then none for 3 minutes, over three refreshes;
    // then a tick again.
    for (const tick of [0, 60, 120]) dash.renderHealth(tickedAt(tick), at + (tick + 30) * 1000);
    for (const now of [301, 311, 321]) dash.renderHealth(tickedAt(120), at + now * 1000);
    dash.renderHealth(tickedAt(330), at + 331_000);
    expect(readOut).toEqual([
      'the scheduler ticks on time',
      'no tick since 2026-11-01T12:02:00Z: the scheduler is failing, see the service log',
      'the scheduler ticks on time',
    ]);
    // Shown as before, the age included.
    expect(dash.element('health').innerHTML).toBe('<span class="">last tick 2026-11-01T12:05:30Z</span>');
  });

  it("shows the planner's error, why jobs wait for nodes and the node group's issues, escaped", () => {
    const dash = loadDashboardScript();
    dash.renderHealth(
      status({
        plannerError: 'budget <b>',
        nodeGroup: {
          waitingReason: 'instances fail to launch (InsufficientInstanceCapacity)',
          issues: [{ code: 'AsgInstanceLaunchFailures', message: 'no capacity' }],
        },
      }),
      at,
    );
    const html = dash.element('health').innerHTML;
    expect(html).toContain('plan failed: budget &#60;b&#62;');
    expect(html).toContain('jobs wait: instances fail to launch (InsufficientInstanceCapacity)');
    expect(html).toContain('node group: AsgInstanceLaunchFailures: no capacity');
  });

  it("shows the executor's error and since when, escaped, and nothing of it once it answers", () => {
    const dash = loadDashboardScript();
    const executorError = {
      message: 'namespace <x> belongs to another boa',
      since: '2026-11-01T11:58:00.000Z',
    };
    dash.renderHealth(status({ executorError }), at);
    expect(dash.element('health').innerHTML).toContain(
      '<span class="over">jobs neither start nor stop: the executor fails since 2026-11-01T11:58:00Z: namespace &#60;x&#62; belongs to another boa</span>',
    );
    dash.renderHealth(status({ executorError: null }), at);
    expect(dash.element('health').innerHTML).not.toContain('executor');
  });

  it('shows the classes left out of plans (stored past the speedup-table bound), and nothing once none is', () => {
    const dash = loadDashboardScript();
    const classesLeftOut = {
      classes: ['w4'],
      message: 'classes w4 (80000 entries over 80 epochs) are left out',
    };
    dash.renderHealth(status({ classesLeftOut }), at);
    expect(dash.element('health').innerHTML).toContain(
      '<span class="over">classes w4 (80000 entries over 80 epochs) are left out</span>',
    );
    dash.renderHealth(status({ classesLeftOut: null }), at);
    expect(dash.element('health').innerHTML).not.toContain('left out');
  });
});
