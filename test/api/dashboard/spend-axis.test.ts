/**
 * The spend chart's time axis reads as the CLI prints times: 24-hour UTC (found in a newcomer trial:
 * vega's default `%I:%M` drew 18:33-18:47 UTC as 06:33 ... 06:47, with no AM/PM).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadDashboardScript, renderSpec } from './load-app.ts';

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

/** `count` buckets of `minutes` from `from` (a quarter-hour of one-minute buckets from 18:33 UTC). */
function ledger(from = '2026-12-01T18:33:00Z', count = 14, minutes = 1) {
  const start = Date.parse(from);
  const step = minutes * 60_000;
  const series = Array.from({ length: count }, (_, i) => ({
    from: new Date(start + i * step).toISOString(),
    to: new Date(start + (i + 1) * step).toISOString(),
    paidGpuHoursPerHour: 8,
    allocatedGpuHoursPerHour: 6,
    paidWindowAverage: 7,
  }));
  return { windowHours: 24, series, budgets: [] };
}

describe("the spend chart's time axis", () => {
  it('labels its ticks with 24-hour UTC times, whatever the zone node runs in', async () => {
    // A zone behind UTC: a tick in local time would read 13:xx.
    process.env.TZ = 'America/New_York';
    const svg = await renderSpec(loadDashboardScript().spendSpec(ledger(), null));
    const ticks = [...svg.matchAll(/<text[^>]*>(\d\d:\d\d)<\/text>/g)].map((m) => m[1]);
    expect(ticks.length).toBeGreaterThan(2);
    for (const tick of ticks) expect(tick).toMatch(/^18:(3[3-9]|4[0-7])$/);
  });

  it('names the day at midnight: a day of buckets always crosses one', async () => {
    process.env.TZ = 'America/New_York';
    const svg = await renderSpec(
      loadDashboardScript().spendSpec(ledger('2026-11-30T19:00:00Z', 96, 15), null),
    );
    const labels = [...svg.matchAll(/<text[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(labels).toContain('Dec 01');
    expect(labels).not.toContain('00:00');
    expect(labels.filter((l) => /^\d\d:\d\d$/.test(l as string)).length).toBeGreaterThan(2);
  });

  it("gives a young service's ticks between whole minutes their seconds: no label twice", async () => {
    // Found in a newcomer trial: four minutes on record read 14:40 14:40 14:41 14:41 ...
    const svg = await renderSpec(loadDashboardScript().spendSpec(ledger('2026-12-06T14:40:00Z', 4), null));
    const times = [...svg.matchAll(/<text[^>]*>(\d\d:\d\d(?::\d\d)?)<\/text>/g)].map((m) => m[1]);
    expect(times.length).toBeGreaterThan(4);
    expect(new Set(times).size).toBe(times.length);
    expect(times).toContain('14:41');
    expect(times.some((t) => /^14:4\d:[1-5]\d$/.test(t as string))).toBe(true);
  });
});
