import type { TopLevelSpec } from 'vega-lite';
import { chartFrame, renderSvg } from './render.ts';

export interface FrontierSeries {
  readonly solver: string;
  readonly points: ReadonlyArray<{
    readonly gpuHoursPerHour: number | null;
    readonly avgJctSeconds: number | null;
  }>;
}

/** Average JCT against budget for each solver, the minimum feasible budget marked. */
export function frontierChart(
  series: readonly FrontierSeries[],
  minFeasibleBudget: number,
  title: string,
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
            title: 'Budget spent (GPU-hours per hour)',
            scale: { zero: false },
          },
          y: {
            field: 'jctMinutes',
            type: 'quantitative',
            title: 'Average job completion time (minutes)',
            scale: { type: 'log' },
          },
          color: { field: 'solver', type: 'nominal', title: 'Calculator' },
        },
      },
      {
        data: {
          values: [{ budget: minFeasibleBudget, label: `minimum feasible ${minFeasibleBudget.toFixed(2)}` }],
        },
        layer: [
          {
            mark: { type: 'rule', strokeDash: [4, 4], color: 'gray' },
            encoding: { x: { field: 'budget', type: 'quantitative' } },
          },
          {
            mark: { type: 'text', align: 'left', dx: 4, y: 8, color: 'gray' },
            encoding: { x: { field: 'budget', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
    ],
  };
  return renderSvg(spec);
}
