import type { TopLevelSpec } from 'vega-lite';
import { chartFrame, renderSvg } from './render.ts';

export interface FrontierSeries {
  readonly solver: string;
  readonly points: ReadonlyArray<{
    readonly gpuHoursPerHour: number | null;
    readonly avgJctSeconds: number | null;
  }>;
}

/** What the service marks on its frontier: the budget set, and where the current plan sits. */
export interface FrontierMarks {
  readonly budget?: number | null;
  readonly plan?: { readonly gpuHoursPerHour: number; readonly avgJctSeconds: number } | null;
  /** The x axis's title; the service's says its GPU-hours are allocated ones, which the budget is not. */
  readonly xTitle?: string;
}

/**
 * Average JCT against budget for each solver, the minimum feasible budget marked, and (service) the
 * budget set and the current plan, so the chart shows where the operator stands on the frontier.
 */
export function frontierChart(
  series: readonly FrontierSeries[],
  minFeasibleBudget: number,
  title: string,
  marks: FrontierMarks = {},
): Promise<string> {
  const values = series.flatMap((s) =>
    s.points
      .filter((p) => p.gpuHoursPerHour !== null && p.avgJctSeconds !== null)
      .map((p) => ({
        solver: s.solver,
        budget: p.gpuHoursPerHour,
        jctMinutes: (p.avgJctSeconds as number) / 60,
      })),
  );
  const spec: TopLevelSpec = {
    ...chartFrame(title),
    layer: [
      {
        data: { values },
        mark: { type: 'line', point: { size: 24 } },
        encoding: {
          x: {
            field: 'budget',
            type: 'quantitative',
            title: marks.xTitle ?? 'GPU-hours per hour allocated to jobs',
            scale: { zero: false },
          },
          y: {
            field: 'jctMinutes',
            type: 'quantitative',
            title: 'Average job completion time (minutes)',
            scale: { type: 'log' },
          },
          // Below the plot: a budget mark at the right edge writes its label where a legend at the
          // side would be (found in review).
          color: { field: 'solver', type: 'nominal', title: 'Calculator', legend: { orient: 'bottom' } },
        },
      },
      verticalMark(
        minFeasibleBudget,
        `minimum feasible ${readable(minFeasibleBudget, (v) => v.toFixed(2))}`,
        'gray',
        8,
      ),
      ...(marks.budget ? [budgetMark(marks.budget, rightEnd(values, minFeasibleBudget, marks.plan))] : []),
      ...(marks.plan ? [planMark(marks.plan)] : []),
    ],
  };
  return renderSvg(spec);
}

/**
 * A label's number in the format it has at everyday sizes, but readable at the ends: a minimum of a
 * fraction of a GPU (no arrivals yet) read 0.00, a plan of 1,500 GPU-hours per hour read 1.50e+3.
 */
function readable(value: number, everyday: (v: number) => string): string {
  if (Math.abs(value) >= 1000) return Math.round(value).toString();
  if (value !== 0 && Math.abs(value) < 0.01) return value.toPrecision(3);
  return everyday(value);
}

/**
 * A budget this many times past the frontier's right end is named at the chart's edge, not drawn where
 * it is: at `budget set 100000` the axis ran to 100,000 and the whole frontier was one vertical line at
 * its left edge (found in a team lead's trial).
 */
const OFF_CHART = 2;

/** The largest budget the chart draws anyway: the frontier's end, the minimum or the plan. */
function rightEnd(
  values: ReadonlyArray<{ budget: number | null }>,
  minFeasibleBudget: number,
  plan: FrontierMarks['plan'],
): number {
  return Math.max(minFeasibleBudget, plan?.gpuHoursPerHour ?? 0, ...values.map((v) => v.budget ?? 0));
}

function budgetMark(budget: number, end: number) {
  if (!(end > 0) || budget <= OFF_CHART * end) {
    return verticalMark(budget, `your budget ${budget}`, '#c0392b', 24);
  }
  return {
    data: { values: [{ budget: end, label: `your budget ${budget} → (off the chart)` }] },
    mark: { type: 'text' as const, align: 'right' as const, dx: -4, y: 24, color: '#c0392b' },
    encoding: { x: { field: 'budget', type: 'quantitative' as const }, text: { field: 'label' } },
  };
}

function verticalMark(budget: number, label: string, color: string, y: number) {
  return {
    data: { values: [{ budget, label }] },
    layer: [
      {
        mark: { type: 'rule' as const, strokeDash: [4, 4], color },
        encoding: { x: { field: 'budget', type: 'quantitative' as const } },
      },
      {
        mark: { type: 'text' as const, align: 'left' as const, dx: 4, y, color },
        encoding: { x: { field: 'budget', type: 'quantitative' as const }, text: { field: 'label' } },
      },
    ],
  };
}

function planMark(plan: NonNullable<FrontierMarks['plan']>) {
  const values = [
    {
      budget: plan.gpuHoursPerHour,
      jctMinutes: plan.avgJctSeconds / 60,
      label: `current plan: ${readable(plan.gpuHoursPerHour, (v) => v.toPrecision(3))} GPU-h/h`,
    },
  ];
  return {
    data: { values },
    layer: [
      {
        mark: { type: 'point' as const, shape: 'diamond', size: 160, filled: true, color: '#c0392b' },
        encoding: {
          x: { field: 'budget', type: 'quantitative' as const },
          y: { field: 'jctMinutes', type: 'quantitative' as const },
        },
      },
      {
        mark: { type: 'text' as const, align: 'left' as const, dx: 8, dy: -8, color: '#c0392b' },
        encoding: {
          x: { field: 'budget', type: 'quantitative' as const },
          y: { field: 'jctMinutes', type: 'quantitative' as const },
          text: { field: 'label' },
        },
      },
    ],
  };
}
