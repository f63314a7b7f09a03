/** The frontier chart's SVG: its marks' labels read the numbers they mark, whatever their size. */
import { describe, expect, it } from 'vitest';
import { frontierChart } from '../../src/charts/frontier-chart.ts';

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);

describe('frontierChart', () => {
  it('labels a small minimum and a large plan with their numbers (not 0.00, not 1.50e+3)', async () => {
    // A service with no arrivals yet: its frontier starts at a fraction of a GPU-hour per hour.
    const small = 0.00016650083163107199;
    const svg = await frontierChart(
      [
        {
          solver: 'exact',
          points: [
            { gpuHoursPerHour: small, avgJctSeconds: 98_806 },
            { gpuHoursPerHour: 1500, avgJctSeconds: 600 },
          ],
        },
      ],
      small,
      'frontier',
      { budget: 2000, plan: { gpuHoursPerHour: 1500, avgJctSeconds: 600 } },
    );
    const labels = texts(svg);
    expect(labels).toContain('minimum feasible 0.000167');
    expect(labels).toContain('current plan: 1500 GPU-h/h');
    expect(labels).toContain('your budget 2000');
  });

  it('keeps two decimals for a minimum of everyday size', async () => {
    const svg = await frontierChart(
      [{ solver: 'exact', points: [{ gpuHoursPerHour: 9.750651606177716, avgJctSeconds: 4076 }] }],
      9.750651606177716,
      'frontier',
      { plan: { gpuHoursPerHour: 24.7812, avgJctSeconds: 534 } },
    );
    expect(texts(svg)).toEqual(
      expect.arrayContaining(['minimum feasible 9.75', 'current plan: 24.8 GPU-h/h']),
    );
  });

  it('names a budget far past the frontier at its edge, so the frontier keeps the width', async () => {
    // `budget set 100000` on a load whose frontier ends at 76 GPU-hours per hour.
    const svg = await frontierChart(
      [
        {
          solver: 'exact',
          points: [
            { gpuHoursPerHour: 16.2, avgJctSeconds: 5825 },
            { gpuHoursPerHour: 76.2, avgJctSeconds: 677 },
          ],
        },
      ],
      16.2,
      'frontier',
      { budget: 100_000, plan: { gpuHoursPerHour: 32.5, avgJctSeconds: 756 } },
    );
    const labels = texts(svg);
    expect(labels).toContain('your budget 100000 → (off the chart)');
    const ticks = labels.filter((l) => /^[\d,.]+$/.test(l)).map((l) => Number(l.replace(/,/g, '')));
    expect(Math.max(...ticks)).toBeLessThan(200);
  });
});
