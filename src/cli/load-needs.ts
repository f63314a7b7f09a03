import { fixed } from './format.ts';

/**
 * The load's need as a budget (paid), and the GPUs it gives the jobs when the window's overhead makes
 * the two differ: a budget between them still queues jobs.
 */
export function needsLine(allocated: number, paid: number | undefined): string {
  const asBudget = paid ?? allocated;
  return fixed(asBudget, 1) === fixed(allocated, 1)
    ? `${fixed(allocated, 1)} GPU-hours/hour`
    : `${fixed(asBudget, 1)} GPU-hours/hour paid (${fixed(allocated, 1)} allocated to jobs)`;
}

/**
 * Whether these rates are no arrivals at all: with none, every class is planned at a negligible rate, so
 * a plan's minimum and spend are ten-thousandths of a GPU that read as a load (found in trials).
 */
export function noArrivals(ratesPerHour: Readonly<Record<string, number>> | null | undefined): boolean {
  return Object.values(ratesPerHour ?? {}).reduce((sum, rate) => sum + rate, 0) < 0.005;
}
