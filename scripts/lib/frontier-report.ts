import type { SweepPoint } from '../../src/core/calc/sweep.ts';

/** The frontier script's JSON for one solver (the format the issue and README document). */
export interface FrontierReport {
  readonly solver: string;
  readonly profiles: string;
  readonly arrivalRatesPerHour: Readonly<Record<string, number>>;
  readonly minFeasibleBudget: number;
  /** Exact solver only: every vertex of the lower convex hull of (budget, JCT). */
  readonly hull?: ReadonlyArray<{ gpuHoursPerHour: number; avgJctSeconds: number }>;
  readonly points: readonly SweepPoint[];
}

/** One row per (solver, budget); the plan as `class=share*w1/w2/...` terms. */
export function frontierCsv(reports: readonly FrontierReport[]): string {
  const rows = ['solver,budget,gpu_hours_per_hour,avg_jct_seconds,solve_ms,plan'];
  for (const report of reports) {
    for (const p of report.points) {
      const plan = p.classes
        ? Object.entries(p.classes)
            .flatMap(([name, shares]) =>
              shares.map((s) => `${name}=${+s.share.toFixed(6)}*${s.widths.join('/')}`),
            )
            .join(' ')
        : '';
      rows.push(
        [
          report.solver,
          p.budget,
          p.gpuHoursPerHour ?? '',
          p.avgJctSeconds ?? '',
          p.solveMs.toFixed(3),
          plan,
        ].join(','),
      );
    }
  }
  return `${rows.join('\n')}\n`;
}
