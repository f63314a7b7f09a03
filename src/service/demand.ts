/**
 * The demand ratio in the service (core/demand-ratio.ts, the simulator's rule too): each allocation
 * sample keeps what the plan in force expected of it, and the ratio is rebuilt from the samples when a
 * plan is made, so a restart forgets nothing.
 */
import { DEFAULT_DEMAND_RATIO, DemandRatio, expectedGpuSeconds } from '../core/demand-ratio.ts';
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;
/** Samples older than this many half-lives weigh under 1/32 together: not read (nor pruned before). */
export const HALF_LIVES_READ = 5;

/** What the plan in force expects of an allocation interval. */
export interface IntervalPlan {
  /** The plan's GPU-hours per hour, plus the GPUs the drain adds to its widths. */
  readonly plannedGpus: number;
  /** The plan was made at its minimum feasible budget. */
  readonly atMinimum: boolean;
  /** The plan's budget without the plan cap, when the cap held it down. */
  readonly uncappedGpus?: number;
}

/** The current plan's expectation, with the drain's extra GPUs; undefined without a plan. */
export function intervalPlan(svc: BoaService, drainExtraGpus: number): IntervalPlan | undefined {
  const row = svc.state.plan?.row;
  if (!row) return undefined;
  const uncapped = (row.inputs as { uncappedBudget?: number }).uncappedBudget;
  const capped = uncapped !== undefined && row.planningBudget < uncapped * (1 - 1e-9);
  return {
    plannedGpus: row.predictedGpuHoursPerHour + drainExtraGpus,
    atMinimum: row.planningBudget <= row.minFeasibleBudget * (1 + 1e-9),
    ...(capped ? { uncappedGpus: uncapped } : {}),
  };
}

/** The GPUs a sample counts as expected (with the anti-windup); null without a plan. */
export function expectedGpus(plan: IntervalPlan | undefined, allocatedGpus: number): number | null {
  if (!plan) return null;
  return expectedGpuSeconds({
    planned: plan.plannedGpus,
    allocated: allocatedGpus,
    atMinimum: plan.atMinimum,
    ...(plan.uncappedGpus !== undefined ? { uncapped: plan.uncappedGpus } : {}),
  });
}

/** The demand ratio now, from the allocation samples; 1 when off or without a budget. */
export function demandRatioNow(svc: BoaService, now: number): number {
  const hours = svc.deps.config.demandHalfLifeHours;
  const budget = svc.state.budget;
  if (!(hours > 0) || !budget) return 1;
  const start = Math.max(svc.state.ledgerSince, now - HALF_LIVES_READ * hours * HOUR);
  const ratio = new DemandRatio(
    { ...DEFAULT_DEMAND_RATIO, halfLifeSeconds: hours * 3600 },
    budget.gpuHoursPerHour,
  );
  // The prior stands at the start of what is read, and decays from there.
  ratio.observe(start / 1000, 0, 0);
  for (const sample of svc.deps.repo.ledger.allocationSince(start)) {
    const seconds = (sample.to - Math.max(sample.from, start)) / 1000;
    // A sample from before expectations were kept is no evidence either way.
    const expected = sample.expectedGpus ?? sample.gpus;
    ratio.observe(sample.to / 1000, sample.gpus * seconds, expected * seconds);
  }
  return ratio.ratio();
}
