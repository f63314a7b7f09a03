/** compare's JCT charts: series told apart, joined by paid spend, in seconds, reading points marked. */
import { describe, expect, it } from 'vitest';
import type { CompareRow } from '../../scripts/lib/compare-report.ts';
import { jctChart, seriesStyles } from '../../scripts/lib/jct-chart.ts';

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);

const run = (policy: string, budget: number, paid: number, avg: number) =>
  ({
    policy,
    budget,
    paidGpuHoursPerHour: paid,
    avgJctSeconds: avg,
    p95JctSeconds: 2 * avg,
    jobs: 1,
    completed: 1,
    knob: 'budget',
  }) as unknown as CompareRow;

describe('jctChart', () => {
  it('gives boa a colour of its own, and no two series the same colour with the same dash or marker', () => {
    const names = [
      'boa',
      'boa (oracle rates)',
      'boa-price',
      'cornucopia',
      'cuckoo',
      'fixed-request',
      'lyra',
    ].concat(['ones', 'pollux-autoscale', 'pollux-budget', 'pollux-fixed', 'boa (paper solver)', 'x']);
    const styles = seriesStyles(names);
    const boa = styles.find((s) => s.name === 'boa');
    expect(styles.filter((s) => s.colour === boa?.colour)).toHaveLength(1);
    const pairs = (key: 'dash' | 'shape') => new Set(styles.map((s) => `${s.colour} ${String(s[key])}`)).size;
    expect(pairs('dash')).toBe(names.length);
    expect(pairs('shape')).toBe(names.length);
  });

  it('joins a series by paid spend, in seconds, with the reading points and the minimum marked', async () => {
    // fixed-request's spend falls as its knob rises here: joined by knob, the line went back and forth.
    const rows = [
      run('fixed-request', 50, 195, 16_500),
      run('fixed-request', 60, 166, 7_700),
      run('fixed-request', 90, 158, 2_900),
    ];
    const svg = await jctChart(rows, 'avg', 'title', [
      { paid: 120, minimumMultiple: 1.2 },
      { paid: 160, minimumMultiple: 1.6 },
    ]);
    const labels = texts(svg);
    expect(labels).toContain('Average job completion time (s, log scale)');
    expect(labels).toContain('minimum 100.0');
    expect(labels).toContain('1.2x = 120.0');
    expect(labels).toContain('1.6x = 160.0');
    const line = /<path[^>]*aria-roledescription="line mark"[^>]*d="M([^"]+)"/.exec(svg);
    const xs = [...(line?.[1] ?? '').matchAll(/(?:^|L)(-?[\d.]+),/g)].map((m) => Number(m[1]));
    expect(xs).toHaveLength(3);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
  });
});
