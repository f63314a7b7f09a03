/**
 * The charts in node (load-app.ts): the spend chart against the budget (its steps, the budget as it was,
 * its axis after a typo, its colours), the frontier chart, and the text that says what each shows.
 */
import { describe, expect, it } from 'vitest';
import { servicesClosedAfterEach } from './app-service.ts';
import { loadDashboardScript, renderSpec } from './load-app.ts';

const service = servicesClosedAfterEach();

const svgSize = (svg: string) => {
  const [, width, height] = /<svg[^>]* width="([^"]+)" height="([^"]+)"/.exec(svg)!;
  return { width: Number(width), height: Number(height) };
};

describe('the spend chart', () => {
  it('has a sane size with no ledger points yet (a service that just started)', async () => {
    const s = await service();
    const dash = loadDashboardScript();
    for (const budget of [null, 40]) {
      if (budget !== null) await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget });
      const ledger = (await s.request('GET', '/v1/ledger?hours=24&points=96')).body;
      expect(ledger.series).toEqual([]);
      const size = svgSize(await renderSpec(dash.spendSpec(ledger, budget)));
      // The page sets height 260 and the container's width: legend and axes add a little.
      expect(size.height).toBeGreaterThan(260);
      expect(size.height).toBeLessThan(400);
      expect(size.width).toBeLessThan(800);
    }
  });

  it("draws each bucket's values over that bucket, the last one included", async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body);
    for (let t = 0; t < 15; t++) {
      await s.ticks(1);
      for (const job of jobs) await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
    }
    // Spend that changes: the jobs go, and so do the nodes.
    for (const job of jobs) await s.request('POST', `/v1/jobs/${job.id}/cancel`);
    await s.ticks(15);
    const ledger = (await s.request('GET', '/v1/ledger?hours=24&points=20')).body;
    const last = ledger.series.at(-1);
    expect(new Set(ledger.series.map((p: any) => p.paidGpuHoursPerHour)).size).toBeGreaterThan(2);
    const spec = loadDashboardScript().spendSpec(ledger, 40);
    const line = spec.layer.find((l: any) => l.mark.type === 'line');
    expect(line.mark.interpolate).toBe('step-after');
    const names = {
      paidGpuHoursPerHour: 'paid (per bucket)',
      allocatedGpuHoursPerHour: 'allocated (per bucket)',
      paidWindowAverage: `paid, ${ledger.windowHours} h average`,
    };
    // A step-after line holds each point's value until the next point's time.
    const drawnAt = (series: string, at: number) =>
      line.data.values
        .filter((v: any) => v.series === series && Date.parse(v.at) <= at)
        .sort((a: any, b: any) => Date.parse(a.at) - Date.parse(b.at))
        .at(-1)?.value;
    for (const [field, series] of Object.entries(names)) {
      for (const bucket of ledger.series) {
        const middle = (Date.parse(bucket.from) + Date.parse(bucket.to)) / 2;
        expect([series, bucket.from, drawnAt(series, middle)]).toEqual([series, bucket.from, bucket[field]]);
      }
      // The line reaches the end of the last bucket (now), not just its start.
      expect(
        Math.max(
          ...line.data.values.filter((v: any) => v.series === series).map((v: any) => Date.parse(v.at)),
        ),
      ).toBe(Date.parse(last.to));
    }
  });
});

describe('the spend chart, the budget', () => {
  it('draws the budget as it was over the span, a step at each change, not only the budget now', async () => {
    const s = await service();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(30);
    const cutAt = s.clock.t;
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 });
    await s.ticks(30);
    const ledger = (await s.request('GET', '/v1/ledger?hours=24&points=20')).body;
    const start = Date.parse(ledger.series[0].from);
    const end = Date.parse(ledger.series.at(-1).to);
    expect(ledger.budgets).toEqual([
      { from: ledger.series[0].from, to: new Date(cutAt).toISOString(), gpuHoursPerHour: 40 },
      { from: new Date(cutAt).toISOString(), to: ledger.series.at(-1).to, gpuHoursPerHour: 20 },
    ]);
    const spec = loadDashboardScript().spendSpec(ledger, 20);
    const line = spec.layer.find((l: any) => l.mark.type === 'line' && l.mark.color === '#c0392b');
    expect(line.mark.interpolate).toBe('step-after');
    // A step-after line holds each point's value until the next point's time.
    const drawnAt = (at: number) =>
      line.data.values
        .filter((v: any) => Date.parse(v.at) <= at)
        .sort((a: any, b: any) => Date.parse(a.at) - Date.parse(b.at))
        .at(-1)?.budget;
    expect(drawnAt(start)).toBe(40);
    expect(drawnAt(cutAt - 1)).toBe(40);
    expect(drawnAt(cutAt)).toBe(20);
    expect(Math.max(...line.data.values.map((v: any) => Date.parse(v.at)))).toBe(end);
    // Rendered: the label names the budget now, and the text says when it changed.
    const svg = await renderSpec(spec);
    expect(svg).toContain('budget 20');
    expect(spec.description).toMatch(
      new RegExp(
        `; budget 20 since ${new Date(cutAt).toISOString().replace('.000Z', 'Z')} \\(40 before\\)\\.$`,
      ),
    );
  });
});

describe('the spend chart after a budget typo', () => {
  it('fits its axis to the spend and the budget now; the typo is drawn along the top edge', async () => {
    const bucket = (minute: number, paid: number) => ({
      from: new Date(Date.UTC(2026, 10, 1, 12, minute)).toISOString(),
      to: new Date(Date.UTC(2026, 10, 1, 12, minute + 15)).toISOString(),
      paidGpuHoursPerHour: paid,
      allocatedGpuHoursPerHour: paid - 2,
      paidWindowAverage: paid,
    });
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 12, minute)).toISOString();
    const ledger = {
      windowHours: 24,
      series: [bucket(0, 14), bucket(15, 16), bucket(30, 15)],
      budgets: [
        { from: at(0), to: at(10), gpuHoursPerHour: 40 },
        { from: at(10), to: at(11), gpuHoursPerHour: 100000 },
        { from: at(11), to: at(45), gpuHoursPerHour: 40 },
      ],
    };
    const dash = loadDashboardScript();
    const domains = (spec: any) =>
      spec.layer.flatMap((l: any) => (l.encoding?.y?.scale ? [l.encoding.y.scale] : []));
    const spec = dash.spendSpec(ledger, 40);
    // 1.1 x the budget now (above the spend), on every layer drawn against the axis.
    expect(domains(spec)).toEqual([
      { domain: [0, 44], clamp: true },
      { domain: [0, 44], clamp: true },
      { domain: [0, 44], clamp: true },
    ]);
    const svg = await renderSpec(spec);
    expect(svg).toContain('budget 40');
    expect(svg).not.toMatch(/>100,?000</);
    // Without a typo the axis is vega's own, as before.
    expect(
      domains(dash.spendSpec({ ...ledger, budgets: [ledger.budgets[0], ledger.budgets[2]] }, 40)),
    ).toEqual([]);
  });
});

describe('the spend chart, its colours', () => {
  it('draws no spend line in a red like the budget line', async () => {
    // Found in review: the paid 24 h average was vega's third colour, a red (#e45756) solid line beside
    // the budget's red dashed one, unnamed in the legend: read as the budget by a glance or a red-weak eye.
    const bucket = (minute: number, paid: number) => ({
      from: new Date(Date.UTC(2026, 10, 1, 12, minute)).toISOString(),
      to: new Date(Date.UTC(2026, 10, 1, 12, minute + 15)).toISOString(),
      paidGpuHoursPerHour: paid,
      allocatedGpuHoursPerHour: paid - 2,
      paidWindowAverage: paid - 1,
    });
    const ledger = {
      windowHours: 24,
      series: [bucket(0, 14), bucket(15, 16)],
      budgets: [{ from: bucket(0, 0).from, to: bucket(15, 0).to, gpuHoursPerHour: 40 }],
    };
    const svg = await renderSpec(loadDashboardScript().spendSpec(ledger, 40));
    const strokes = [...svg.matchAll(/<path [^>]*stroke="(#[0-9a-f]{6})"/gi)].map((m) => m[1]!.toLowerCase());
    const hue = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255) as [
        number,
        number,
        number,
      ];
      const max = Math.max(r, g, b);
      const range = max - Math.min(r, g, b);
      if (range < 0.15) return null; // a grey: no hue to mistake
      const h = max === r ? (g - b) / range : max === g ? 2 + (b - r) / range : 4 + (r - g) / range;
      return (h * 60 + 360) % 360;
    };
    const budgetLines = strokes.filter((s) => s === '#c0392b');
    expect(budgetLines.length).toBeGreaterThan(0);
    const others = strokes.filter((s) => s !== '#c0392b');
    // The three series, each in the chart and its legend.
    expect(new Set(others).size).toBeGreaterThanOrEqual(3);
    for (const stroke of others) {
      const h = hue(stroke);
      if (h !== null) expect([stroke, Math.min(h, 360 - h) > 25]).toEqual([stroke, true]);
    }
  });
});

describe("the charts' text", () => {
  it('says the numbers a chart shows, and what it lacks while there are none', () => {
    const dash = loadDashboardScript();
    expect(dash.spendSummary({ windowHours: 24, series: [] }, null)).toBe(
      'Spend against the budget: nothing recorded yet; no budget set.',
    );
    const bucket = {
      from: '2026-11-01T11:45:00.000Z',
      to: '2026-11-01T12:00:00.000Z',
      paidGpuHoursPerHour: 16,
      allocatedGpuHoursPerHour: 12.5,
      paidWindowAverage: 4.123,
    };
    const ledger = { windowHours: 24, series: [bucket] };
    expect(dash.spendSpec(ledger, 40).description).toBe(dash.spendSummary(ledger, 40));
    expect(dash.spendSummary(ledger, 40)).toBe(
      'Spend against the budget, GPU-hours per hour: paid 16.00 and allocated 12.50 in the last bucket, to 2026-11-01T12:00:00Z, paid 4.12 on average over the 24 h window; budget 40.',
    );
    // No arrivals yet: budgets of ten-thousandths, not 0.00.
    const frontier = {
      vertices: [
        { gpuHoursPerHour: 0.00016654, avgJctSeconds: 98806 },
        { gpuHoursPerHour: 0.000389, avgJctSeconds: 5400 },
      ],
      budget: 40,
      plan: { gpuHoursPerHour: 0.000333, avgJctSeconds: 4280 },
    };
    expect(dash.frontierSpec(frontier).description).toBe(dash.frontierSummary(frontier));
    expect(dash.frontierSummary(frontier)).toBe(
      'What each budget buys: average JCT from 27.4 h at 0.000167 GPU-hours per hour to 1.5 h at 0.000389 GPU-hours per hour; your budget 40; the plan 1.2 h at 0.000333 GPU-hours per hour.',
    );
  });
});

describe('the frontier chart', () => {
  it('names a budget far past the frontier at its edge, says what its axes are, and when there is no load', () => {
    const dash = loadDashboardScript();
    const frontier = {
      vertices: [
        { gpuHoursPerHour: 16.2, avgJctSeconds: 5825 },
        { gpuHoursPerHour: 76.2, avgJctSeconds: 677 },
      ],
      budget: 100000,
      plan: { gpuHoursPerHour: 32.5, avgJctSeconds: 756 },
    };
    interface Layer {
      data?: { values?: Array<{ budget: number }> };
      layer?: Layer[];
    }
    const xs = (layer: Layer): number[] => [
      ...(layer.data?.values ?? []).map((v) => v.budget),
      ...(layer.layer ?? []).flatMap(xs),
    ];
    const layers: Layer[] = dash.frontierSpec(frontier).layer;
    expect(Math.max(...layers.flatMap(xs))).toBe(76.2);
    expect(JSON.stringify(layers)).toContain('your budget 100000 → (off the chart)');
    // The frontier's GPU-hours are allocated ones and its JCTs the model's, not what a run measures.
    const axes = JSON.stringify(layers[0]);
    expect(axes).toContain('"title":"allocated GPU-hours per hour"');
    expect(axes).toContain('"title":"predicted average JCT (minutes, no queueing)"');
    // No arrivals: a frontier of ten-thousandths of a GPU, said in its title and its words.
    const empty = { ...frontier, ratesPerHour: { cifar10: 0, bert: 0 } };
    expect(dash.frontierSpec(empty).title).toBe(
      'no arrivals yet, so a frontier of no load (boa history import, or prior rates)',
    );
    expect(dash.frontierSummary(empty)).toContain('no arrivals yet');
    expect(dash.frontierSpec({ ...frontier, ratesPerHour: { cifar10: 8 } }).title).toBeUndefined();
    // A budget near the frontier is still drawn where it is.
    expect(Math.max(...dash.frontierSpec({ ...frontier, budget: 120 }).layer.flatMap(xs))).toBe(120);
  });
});
