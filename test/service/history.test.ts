/**
 * Arrival history (src/service/history.ts): submissions from before the service's record, imported so
 * that its rate window starts full. The service then plans as the simulator's `compare --history` does.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PAST_ARRIVALS } from '../../src/service/history.ts';
import { pruneOldRows } from '../../src/service/retention.ts';
import { DEFAULT_ONLINE_RATES, OnlineRates } from '../../src/sim/policies/boa/online-rates.ts';
import { ManualClock, startService } from './harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await boa?.close();
  boa = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 1);

/** One cifar10 an hour for 47 hours, then three bert in the last hour; the last a minute before T0. */
function twoDays(end = T0 - 60_000) {
  const arrivals = Array.from({ length: 47 }, (_, k) => ({
    className: 'cifar10',
    submittedAt: end - (k + 1) * HOUR,
  }));
  for (const minutes of [40, 20, 0])
    arrivals.push({ className: 'bert', submittedAt: end - minutes * 60_000 });
  return arrivals;
}

const count = (b: Booted, table: string) =>
  b.db.$client.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('arrival history', () => {
  it("makes the service's estimator read what the simulator's --history reads, and re-plans", async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const cold = boa.service.estimatedRates(T0);
    expect(cold.cifar10 ?? 0).toBe(0);
    const plansBefore = count(boa, 'plans');

    const history = twoDays();
    const res = await boa.request('POST', '/v1/history', {
      source: 'last-week.csv',
      arrivals: history.map((a, i) =>
        // Both forms of a time are accepted: ms and ISO 8601.
        i % 2 ? a : { ...a, submittedAt: new Date(a.submittedAt).toISOString() },
      ),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      alreadyImported: false,
      leftOut: 0,
      import: { id: 1, arrivals: 50, source: 'last-week.csv' },
    });
    await boa.service.planner.idle();
    expect(count(boa, 'plans')).toBe(plansBefore + 1);
    expect(boa.repo.latestPlan()?.inputs).toMatchObject({ ratesPerHour: { cifar10: expect.any(Number) } });

    // The simulator's estimator with the same days before its first arrival (a bert at T0).
    const sim = new OnlineRates([...boa.service.state.classes.keys()], {
      ...DEFAULT_ONLINE_RATES,
      history: history
        .map((a) => ({ app: a.className, secondsBefore: (T0 - a.submittedAt) / 1000 }))
        .reverse(),
    });
    sim.record('bert', T0 / 1000);
    expect((await boa.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    for (const hours of [0, 1, 5, 30]) {
      const now = T0 + hours * HOUR;
      const service = boa.service.estimatedRates(now);
      const simulated = sim.ratesAt(now / 1000);
      for (const [name, rate] of Object.entries(service)) {
        if (rate > 0) expect(simulated[name], `${name} at ${hours} h`).toBeCloseTo(rate, 12);
        else expect(simulated[name]).toBeUndefined();
      }
    }
    expect(boa.service.estimatedRates(T0).cifar10).toBeGreaterThan(0.8);
  });

  it('counts the same content once, refuses an overlapping span, and deletes', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    const arrivals = twoDays();
    expect((await boa.request('POST', '/v1/history', { arrivals })).status).toBe(200);
    const rates = boa.service.estimatedRates(T0);
    const again = await boa.request('POST', '/v1/history', {
      source: 'again',
      arrivals: [...arrivals].reverse(),
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ alreadyImported: true, import: { id: 1, source: 'unnamed' } });
    const overlapping = await boa.request('POST', '/v1/history', { arrivals: arrivals.slice(1) });
    expect(overlapping.status).toBe(409);
    expect(overlapping.body.error.message).toMatch(/overlaps import 1 .*counted twice/);
    expect(count(boa, 'past_arrivals')).toBe(50);
    expect(boa.service.estimatedRates(T0)).toEqual(rates);

    // An older day, before the first import's span: accepted.
    const older = [{ className: 'bert', submittedAt: T0 - 47.5 * HOUR }];
    const second = await boa.request('POST', '/v1/history', { arrivals: older });
    expect(second.body.import.id).toBe(2);
    const listed = await boa.request('GET', '/v1/history');
    expect(listed.body.imports.map((i: { id: number }) => i.id)).toEqual([1, 2]);
    expect(listed.body.observedSince).toBe(new Date(T0 - 47.5 * HOUR - 1).toISOString());
    expect(listed.body.recordStartedAt).toBe(new Date(T0).toISOString());

    expect((await boa.request('DELETE', '/v1/history/1')).status).toBe(200);
    expect((await boa.request('DELETE', '/v1/history/1')).status).toBe(404);
    expect((await boa.request('DELETE', '/v1/history/2')).body.deleted.arrivals).toBe(1);
    expect(count(boa, 'past_arrivals')).toBe(0);
    expect((await boa.request('GET', '/v1/history')).body.observedSince).toBe(new Date(T0).toISOString());
    expect(boa.service.estimatedRates(T0).cifar10 ?? 0).toBe(0);
  });

  it('a retry after an arrival has left the reach is still the import it made, not a 409', async () => {
    const clock = new ManualClock(T0);
    boa = await startService({ clock });
    const arrivals = [
      { className: 'cifar10', submittedAt: T0 - 47.99 * HOUR }, // 36 s inside the 48 h reach
      { className: 'cifar10', submittedAt: T0 - 10 * HOUR },
      { className: 'bert', submittedAt: T0 - HOUR },
    ];
    const first = await boa.request('POST', '/v1/history', { source: 'log.csv', arrivals });
    expect(first.body).toMatchObject({ alreadyImported: false, leftOut: 0, import: { arrivals: 3 } });
    clock.advance(120); // a client retry after a timeout: the oldest arrival is now out of reach
    const again = await boa.request('POST', '/v1/history', { source: 'log.csv', arrivals });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual({ ...first.body, alreadyImported: true });
    expect(count(boa, 'history_imports')).toBe(1);
  });

  it('recognises an import stored with the digest of only the arrivals within reach then', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    const arrivals = [
      { className: 'cifar10', submittedAt: T0 - 50 * HOUR }, // out of reach: left out
      { className: 'cifar10', submittedAt: T0 - 10 * HOUR },
      { className: 'bert', submittedAt: T0 - HOUR },
    ];
    const first = await boa.request('POST', '/v1/history', { arrivals });
    expect(first.body).toMatchObject({ leftOut: 1, import: { arrivals: 2 } });
    // What the service stored before its digest covered every arrival sent.
    const hash = createHash('sha256').update(String(T0 - 50 * HOUR - 1));
    for (const a of arrivals.slice(1)) hash.update(`\n${a.submittedAt},${a.className}`);
    boa.db.$client.prepare('UPDATE history_imports SET digest = ?').run(hash.digest('hex'));
    const again = await boa.request('POST', '/v1/history', { arrivals });
    expect(again.body).toMatchObject({
      alreadyImported: true,
      leftOut: 1,
      import: { id: first.body.import.id },
    });
  });

  it('refuses what it cannot count, naming what is wrong, and stores nothing', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    const refused = async (body: unknown, status: number, pattern: RegExp, field?: string) => {
      const res = await boa!.request('POST', '/v1/history', body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.message).toMatch(pattern);
      if (field) expect(res.body.error.field).toBe(field);
    };
    await refused(
      {
        arrivals: [
          { className: 'cifar10', submittedAt: T0 - HOUR },
          { className: 'gpt5', submittedAt: T0 - HOUR },
        ],
      },
      422,
      /class\(es\) the service does not have: gpt5; its classes are .*cifar10/,
      'arrivals[1].className',
    );
    await refused(
      { arrivals: [{ className: 'cifar10', submittedAt: T0 + 1 }] },
      422,
      /not before the service's own record began \(2026-11-01T00:00:00.000Z\)/,
      'arrivals[0].submittedAt',
    );
    await refused(
      { arrivals: [{ className: 'cifar10', submittedAt: T0 - 49 * HOUR }] },
      422,
      /older than the rate estimator reads \(2 x rateWindowHours = 48 hours/,
    );
    await refused(
      { observedFrom: T0 - HOUR, arrivals: [{ className: 'cifar10', submittedAt: T0 - 2 * HOUR }] },
      422,
      /observedFrom .* must be before the first arrival/,
      'observedFrom',
    );
    await refused({ arrivals: [{ className: 'cifar10', submittedAt: 'yesterday' }] }, 400, /ISO 8601/);
    await refused({ arrivals: [] }, 400, /at least 1|>=1|too small/i);
    expect(count(boa, 'history_imports') + count(boa, 'past_arrivals')).toBe(0);
  });

  it('keeps at most MAX_PAST_ARRIVALS within reach over all imports, and says so', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    // One class every 10 s: 6,000 in the 17 hours before T0, 6,000 in the 17 before those.
    const day = (end: number) =>
      Array.from({ length: 6000 }, (_, i) => ({ className: 'ncf', submittedAt: end - i * 10_000 }));
    expect((await boa.request('POST', '/v1/history', { arrivals: day(T0 - 60_000) })).status).toBe(200);
    const over = await boa.request('POST', '/v1/history', { arrivals: day(T0 - 18 * HOUR) });
    expect(over.status).toBe(422);
    expect(over.body.error.message).toMatch(
      new RegExp(
        `6000 arrivals within the estimator's reach, beside the 6000 imported before, are over the ${MAX_PAST_ARRIVALS}`,
      ),
    );
    expect(count(boa, 'past_arrivals')).toBe(6000);
    // The same content again is still the import it was, not a refusal.
    expect(
      (await boa.request('POST', '/v1/history', { arrivals: day(T0 - 60_000) })).body.alreadyImported,
    ).toBe(true);
  });

  it('keeps an import across a restart, and prunes arrivals no estimate reads', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-history-'));
    dirs.push(dataDir);
    const clock = new ManualClock(T0);
    boa = await startService({ dataDir, clock });
    expect((await boa.request('POST', '/v1/history', { arrivals: twoDays() })).status).toBe(200);
    const before = boa.service.estimatedRates(T0 + HOUR);
    await boa.close();
    boa = await startService({ dataDir, clock });
    expect(boa.service.estimatedRates(T0 + HOUR)).toEqual(before);
    expect(boa.service.state.ratesObservedSince).toBeLessThan(T0 - 47 * HOUR);

    clock.advance(24 * 3600);
    pruneOldRows(boa.service);
    expect(count(boa, 'past_arrivals')).toBe(50); // all within 2 windows and a day
    clock.advance(48 * 3600);
    pruneOldRows(boa.service);
    expect(count(boa, 'past_arrivals')).toBeLessThan(50);
    expect(count(boa, 'history_imports')).toBe(1); // the record of what was imported stays
  });
});
