/**
 * compare's JCT charts: JCT (average or P95) against paid GPU-hours per hour, one line per series, as
 * in the BOA paper's Figures 4 and 6: every policy is placed by what it actually paid, whatever its
 * knob, and each line joins its runs in order of paid spend.
 */
import type { TopLevelSpec } from 'vega-lite';
import { chartFrame, renderSvg } from '../../src/charts/render.ts';
import { type CompareRow, knobLabel, type PaidPoint, seriesOf } from './compare-report.ts';

/** boa's own series, drawn in black and thicker: no other series has it. */
const BOA = 'boa';
const boaSeriesColour = '#000000';
// Paul Tol's "bright" scheme, safe for colour-blind readers; with 7 colours and 6 dash patterns every
// series of the matrix (about 12) has its own pair, and a marker shape of its own besides (found in a
// trial: tableau20's boa #4c78a8 and pollux-autoscale #439894 read as one).
const COLOURS = ['#4477AA', '#EE6677', '#228833', '#CCBB44', '#66CCEE', '#AA3377', '#BBBBBB'];
const DASHES = [
  [1, 0],
  [6, 3],
  [2, 2],
  [8, 3, 2, 3],
  [12, 4],
  [3, 5],
];
// Six shapes against seven colours: the two series sharing a colour never share a shape too.
const SHAPES = ['square', 'triangle-up', 'diamond', 'cross', 'triangle-down', 'triangle-right'];

/** Each series' colour, dash and marker, boa's first; the others in the order given. */
export function seriesStyles(
  names: readonly string[],
): Array<{ name: string; colour: string; dash: number[]; shape: string }> {
  const others = names.filter((n) => n !== BOA);
  return [
    ...(names.includes(BOA) ? [{ name: BOA, colour: boaSeriesColour, dash: [1, 0], shape: 'circle' }] : []),
    ...others.map((name, i) => ({
      name,
      colour: COLOURS[i % COLOURS.length] as string,
      dash: DASHES[Math.floor(i / COLOURS.length) % DASHES.length] as number[],
      shape: SHAPES[i % SHAPES.length] as string,
    })),
  ];
}

/** The reading points (at-paid) as vertical rules, and the minimum feasible budget when known. */
function readingRules(points: readonly PaidPoint[]) {
  const multiple = points.find((p) => p.minimumMultiple !== undefined);
  const minimum = multiple === undefined ? undefined : multiple.paid / (multiple.minimumMultiple as number);
  const values = [
    ...(minimum === undefined || points.some((p) => p.minimumMultiple === 1)
      ? []
      : [{ paid: minimum, label: `minimum ${minimum.toFixed(1)}` }]),
    ...points.map((p) => ({
      paid: p.paid,
      label:
        p.minimumMultiple === undefined
          ? `at ${p.paid}`
          : `${p.minimumMultiple}x${p.minimumMultiple === 1 ? ' (minimum)' : ''} = ${p.paid.toFixed(1)}`,
    })),
  ];
  const x = { field: 'paid', type: 'quantitative' as const };
  // One layer a label, each a line lower than the last: 1.2x and the minimum lie close and overlapped.
  return {
    layer: values.map((value, i) => ({
      data: { values: [value] },
      layer: [
        { mark: { type: 'rule' as const, strokeDash: [4, 4], color: 'gray' }, encoding: { x } },
        {
          mark: {
            type: 'text' as const,
            align: 'left' as const,
            dx: 3,
            y: 8 + 12 * (i % 3),
            color: 'dimgray',
            fontSize: 10,
          },
          encoding: { x, text: { field: 'label' } },
        },
      ],
    })),
  };
}

export function jctChart(
  rows: readonly CompareRow[],
  metric: 'avg' | 'p95',
  title: string,
  points: readonly PaidPoint[] = [],
): Promise<string> {
  const field = metric === 'avg' ? 'avgJctSeconds' : 'p95JctSeconds';
  const values = rows
    .filter((r) => r.completed === r.jobs && Number.isFinite(r[field]))
    .map((r) => ({
      policy: seriesOf(r),
      paid: r.paidGpuHoursPerHour,
      jctSeconds: r[field],
      knob: knobLabel(r),
    }))
    .sort((a, b) => a.policy.localeCompare(b.policy) || a.paid - b.paid);
  const styles = seriesStyles([...new Set(values.map((v) => v.policy))]);
  const domain = styles.map((s) => s.name);
  const legend = { title: 'Series', symbolStrokeWidth: 2, symbolSize: 80 };
  const lines = {
    data: { values },
    mark: { type: 'line' as const, point: { size: 36, filled: true } },
    encoding: {
      x: {
        field: 'paid',
        type: 'quantitative' as const,
        title: 'Paid GPU-hours per hour',
        scale: { zero: false },
      },
      y: {
        field: 'jctSeconds',
        type: 'quantitative' as const,
        title: `${metric === 'avg' ? 'Average' : 'P95'} job completion time (s, log scale)`,
        scale: { type: 'log' as const },
      },
      // Joined by paid spend, not by knob value: a policy's spend need not grow with its knob.
      order: { field: 'paid', type: 'quantitative' as const },
      color: {
        field: 'policy',
        type: 'nominal' as const,
        scale: { domain, range: styles.map((s) => s.colour) },
        legend,
      },
      strokeDash: {
        field: 'policy',
        type: 'nominal' as const,
        scale: { domain, range: styles.map((s) => s.dash) },
        legend,
      },
      shape: {
        field: 'policy',
        type: 'nominal' as const,
        scale: { domain, range: styles.map((s) => s.shape) },
        legend,
      },
      strokeWidth: { condition: { test: `datum.policy === '${BOA}'`, value: 3 }, value: 1.5 },
      tooltip: [{ field: 'policy' }, { field: 'knob' }, { field: 'paid' }, { field: 'jctSeconds' }],
    },
  };
  const spec: TopLevelSpec = {
    ...chartFrame(title),
    layer: points.length > 0 ? [lines, readingRules(points)] : [lines],
  } as TopLevelSpec;
  return renderSvg(spec);
}
