/*
 * The dashboard's two charts: their Vega-Lite specs, the spend against the budget over the last 24 h
 * (spendSpec, the budget as it was over those hours) and what each budget buys on the current frontier
 * (frontierSpec), and their drawing with vega into the page, each replacing its previous view (redraw).
 */
/* global vega, vegaLite */
/* global $, drawnElsewhere, fmt, minutes, utcTime -- format.js */
/* exported redraw, spendSpec, frontierSpec -- used by app.js */
'use strict';

/**
 * Vega's expressions parsed to trees and run by its interpreter (vega-interpreter), not compiled with
 * Function: the page's Content-Security-Policy allows no eval.
 */
async function draw(container, spec) {
  const runtime = vega.parse(vegaLite.compile(spec).spec, null, { ast: true });
  const view = new vega.View(runtime, { renderer: 'svg', container, expr: vega.expressionInterpreter });
  await view.runAsync();
  return view;
}

const views = {};
async function redraw(name, spec) {
  views[name]?.finalize();
  drawnElsewhere(name);
  views[name] = await draw($(name), spec);
}

/** A chart's number for its text: 3 significant digits, so a tiny budget (0.000167) is not 0.00. */
const short = (value) => String(Number(value.toPrecision(3)));

/**
 * The spend chart in words, its spec's description (found in a trial: the charts had no text, a screen
 * reader met only SVG marks): the last bucket's paid and allocated, the window's average, the budget.
 */
function spendSummary(ledger, budget) {
  const spans = ledger.budgets ?? [];
  const since = spans.length > 1 ? spans[spans.length - 1].from : null;
  const before = spans.slice(0, -1).map((b) => b.gpuHoursPerHour);
  const target =
    budget === null
      ? 'no budget set'
      : since
        ? `budget ${budget} since ${utcTime(since)} (${before.join(', then ')} before)`
        : `budget ${budget}`;
  const last = ledger.series[ledger.series.length - 1];
  if (!last) return `Spend against the budget: nothing recorded yet; ${target}.`;
  return (
    `Spend against the budget, GPU-hours per hour: paid ${fmt(last.paidGpuHoursPerHour)} and allocated ` +
    `${fmt(last.allocatedGpuHoursPerHour)} in the last bucket, to ${utcTime(last.to)}, paid ` +
    `${fmt(last.paidWindowAverage)} on average over the ${ledger.windowHours} h window; ${target}.`
  );
}

/**
 * No arrivals: every class at a negligible rate, budgets of ten-thousandths of a GPU, a frontier of no
 * load (found in a team lead's trial; `boa frontier` says the same). The chart's title says so.
 */
const NO_ARRIVALS = 'no arrivals yet, so a frontier of no load (boa history import, or prior rates)';
/** The same after a quiet spell: there were jobs, none within the rate window (found in review). */
const QUIET = 'no arrivals in the rate window, so a frontier of no load (boa history import, or prior rates)';
const noArrivalsText = (frontier) => (frontier.lastSubmittedAt ? QUIET : NO_ARRIVALS);
const noArrivals = (frontier) =>
  frontier.ratesPerHour !== undefined && !Object.values(frontier.ratesPerHour).some((rate) => rate > 0);

/** The frontier in words: its two ends, the budget and the plan. */
function frontierSummary(frontier) {
  if (noArrivals(frontier)) return `What each budget buys: ${noArrivalsText(frontier)}.`;
  const [first, last] = [frontier.vertices[0], frontier.vertices[frontier.vertices.length - 1]];
  const at = (budget, seconds) => `${minutes(seconds)} at ${short(budget)} GPU-hours per hour`;
  const parts = first
    ? [
        `average JCT from ${at(first.gpuHoursPerHour, first.avgJctSeconds)} to ${at(last.gpuHoursPerHour, last.avgJctSeconds)}`,
      ]
    : ['no estimates yet'];
  if (frontier.budget !== null && frontier.budget !== undefined) parts.push(`your budget ${frontier.budget}`);
  if (frontier.plan) parts.push(`the plan ${at(frontier.plan.gpuHoursPerHour, frontier.plan.avgJctSeconds)}`);
  return `What each budget buys: ${parts.join('; ')}.`;
}

/**
 * The spend lines' colours: blue, orange and a dark grey, none a red like the budget's dashed line
 * (#c0392b). Vega's third colour, a red, drew the paid average as a solid red line beside the budget,
 * read as the budget at a glance or by a red-weak eye (found in review).
 */
const SERIES_COLOURS = ['#4c78a8', '#f58518', '#333333'];

function spendSpec(ledger, budget) {
  const names = ['paid (per bucket)', 'allocated (per bucket)', `paid, ${ledger.windowHours} h average`];
  const point = (at, p) => [
    { at, series: names[0], value: p.paidGpuHoursPerHour },
    { at, series: names[1], value: p.allocatedGpuHoursPerHour },
    { at, series: names[2], value: p.paidWindowAverage },
  ];
  const first = ledger.series[0];
  const last = ledger.series[ledger.series.length - 1];
  // Step-after holds a point's value until the next point: each bucket's values start at its `from`,
  // and the last bucket's are repeated at its `to` (now), so every bucket is drawn over its own span
  // (at `to`, each was drawn a bucket late and the last one not at all).
  const values = [...ledger.series.flatMap((p) => point(p.from, p)), ...(last ? point(last.to, last) : [])];
  const end = last ? new Date(last.to).getTime() : Date.now();
  // The budget window, shaded; clipped to the series so a young service's chart is not mostly empty.
  const start = first ? new Date(first.from).getTime() : end;
  const windowStart = new Date(Math.max(start, end - ledger.windowHours * 3_600_000)).toISOString();
  // UTC, as the times in the tables and everywhere else in boa; the browser's zone would shift the axis.
  // 24-hour, as the CLI prints times: vega's default `%I:%M` read 18:33 as 06:33, with no AM/PM (found
  // in a newcomer trial). On a UTC scale vega-lite formats with utcFormat.
  const x = {
    field: 'at',
    type: 'temporal',
    title: 'time (UTC)',
    scale: { type: 'utc' },
    // The day at midnight, as vega's own labels had it (the 24-hour chart always crosses one: found in
    // review, a fixed %H:%M read 23:00 | 00:00 | 01:00 with no date anywhere).
    // A tick between whole minutes (a young service's few minutes are ticked every 10 or 30 s) shows
    // its seconds: %H:%M alone read 14:40 14:40 14:41 14:41 (found in a newcomer trial).
    axis: {
      format: '%H:%M',
      labelExpr:
        "utcseconds(datum.value) !== 0 ? utcFormat(datum.value, '%H:%M:%S') : " +
        "utchours(datum.value) === 0 && utcminutes(datum.value) === 0 ? utcFormat(datum.value, '%b %d') : datum.label",
    },
  };
  const spans = ledger.budgets ?? [];
  const latest = spans[spans.length - 1];
  // A budget held for minutes far above the spend (a typo, corrected) set the axis for the day it
  // stayed in the chart, every line flat at its foot (found by a newcomer's review): the axis fits the
  // spend and the budget now, and a step above that is drawn along the top edge.
  const top = Math.max(0, latest?.gpuHoursPerHour ?? budget ?? 0, ...values.map((v) => v.value ?? 0));
  const highest = Math.max(0, ...spans.map((b) => b.gpuHoursPerHour));
  const y = (field, more = {}) => ({
    field,
    type: 'quantitative',
    ...more,
    ...(top > 0 && highest > OFF_CHART * top ? { scale: { domain: [0, 1.1 * top], clamp: true } } : {}),
  });
  const layers = [
    {
      data: { values: [{ from: windowStart, to: new Date(end).toISOString() }] },
      mark: { type: 'rect', color: '#1f3a5f', opacity: 0.06 },
      encoding: { x: { field: 'from', type: 'temporal', scale: { type: 'utc' } }, x2: { field: 'to' } },
    },
    {
      data: { values },
      mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x,
        y: y('value', { title: 'GPU-hours per hour' }),
        // The series named up front: with no points yet (a service that just started) an empty
        // legend made vega size the chart 1.8e308 px tall; and each series keeps its colour.
        color: {
          field: 'series',
          type: 'nominal',
          title: null,
          scale: { domain: names, range: SERIES_COLOURS },
          legend: { orient: 'bottom' },
        },
      },
    },
  ];
  if (latest) {
    // The budget as it was over the chart's span, a step at each change (found in a trial: only
    // today's was drawn, so the hours before a cut read as over the budget).
    const steps = [
      ...spans.map((b) => ({ at: b.from, budget: b.gpuHoursPerHour })),
      { at: latest.to, budget: latest.gpuHoursPerHour },
    ];
    layers.push({
      data: { values: steps },
      mark: { type: 'line', interpolate: 'step-after', color: '#c0392b', strokeDash: [6, 4], size: 2 },
      encoding: { x, y: y('budget') },
    });
    layers.push({
      data: {
        values: [
          {
            at: latest.to,
            budget: latest.gpuHoursPerHour,
            label: `budget ${budget ?? latest.gpuHoursPerHour}`,
          },
        ],
      },
      mark: { type: 'text', color: '#c0392b', align: 'right', dy: -7 },
      encoding: { x, y: y('budget'), text: { field: 'label' } },
    });
  } else if (budget !== null) {
    // Nothing recorded yet (no span to draw over): the budget now across the chart.
    layers.push({
      data: { values: [{ budget, label: `budget ${budget}` }] },
      layer: [
        {
          mark: { type: 'rule', color: '#c0392b', strokeDash: [6, 4], size: 2 },
          encoding: { y: { field: 'budget', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', color: '#c0392b', align: 'left', x: 4, dy: -7 },
          encoding: { y: { field: 'budget', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    });
  }
  return {
    // Vega gives it to the chart's container as its aria-label: a screen reader reads the numbers.
    description: spendSummary(ledger, budget),
    width: 'container',
    height: 260,
    layer: layers,
    config: { view: { stroke: null } },
  };
}

/**
 * A budget this many times past the frontier's right end is named at the chart's edge, not drawn where
 * it is: at `budget set 100000` the axis ran to 100,000 and the frontier was a line at its left edge
 * (found in a team lead's trial; the service's SVG chart does the same, charts/frontier-chart.ts).
 */
const OFF_CHART = 2;

function frontierSpec(frontier) {
  const values = frontier.vertices.map((v) => ({ budget: v.gpuHoursPerHour, jct: v.avgJctSeconds / 60 }));
  const layers = [
    {
      data: { values },
      mark: { type: 'line', point: true },
      encoding: {
        x: {
          field: 'budget',
          type: 'quantitative',
          title: 'allocated GPU-hours per hour',
          scale: { zero: false },
        },
        y: {
          field: 'jct',
          type: 'quantitative',
          title: 'predicted average JCT (minutes, no queueing)',
          scale: { type: 'log' },
        },
      },
    },
  ];
  const end = Math.max(frontier.plan?.gpuHoursPerHour ?? 0, ...values.map((v) => v.budget));
  if (
    frontier.budget !== null &&
    frontier.budget !== undefined &&
    end > 0 &&
    frontier.budget > OFF_CHART * end
  ) {
    layers.push({
      data: { values: [{ budget: end, label: `your budget ${frontier.budget} → (off the chart)` }] },
      mark: { type: 'text', color: '#c0392b', align: 'right', dx: -4, y: 10 },
      encoding: { x: { field: 'budget', type: 'quantitative' }, text: { field: 'label' } },
    });
  } else if (frontier.budget !== null && frontier.budget !== undefined) {
    layers.push({
      data: { values: [{ budget: frontier.budget, label: `your budget ${frontier.budget}` }] },
      layer: [
        {
          mark: { type: 'rule', color: '#c0392b', strokeDash: [6, 4] },
          encoding: { x: { field: 'budget', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', color: '#c0392b', align: 'left', dx: 4, y: 10 },
          encoding: { x: { field: 'budget', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    });
  }
  if (frontier.plan) {
    layers.push({
      data: {
        values: [
          { budget: frontier.plan.gpuHoursPerHour, jct: frontier.plan.avgJctSeconds / 60, label: 'plan' },
        ],
      },
      layer: [
        {
          mark: { type: 'point', shape: 'diamond', size: 150, filled: true, color: '#c0392b' },
          encoding: {
            x: { field: 'budget', type: 'quantitative' },
            y: { field: 'jct', type: 'quantitative' },
          },
        },
        {
          mark: { type: 'text', color: '#c0392b', align: 'left', dx: 8, dy: -8 },
          encoding: {
            x: { field: 'budget', type: 'quantitative' },
            y: { field: 'jct', type: 'quantitative' },
            text: { field: 'label' },
          },
        },
      ],
    });
  }
  return {
    description: frontierSummary(frontier),
    ...(noArrivals(frontier) ? { title: noArrivalsText(frontier) } : {}),
    width: 'container',
    height: 260,
    layer: layers,
    config: { view: { stroke: null } },
  };
}
