import type { Command } from 'commander';
import type { planView } from '../../service/views.ts';
import { contextOf, output } from '../context.ts';
import { PREDICTED_NOTE } from './frontier.ts';
import { duration, fixed, keyValues, percent, significant, table, when } from '../format.ts';
import { noArrivals } from '../load-needs.ts';

type PlanView = NonNullable<ReturnType<typeof planView>>;

export function addPlanCommands(program: Command): void {
  const plan = program
    .command('plan')
    .description('the current plan: GPU widths per job class and statistical epoch, predicted JCT and spend')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<PlanView>('GET', '/v1/plan', undefined, undefined, [
        'widths',
      ]);
      output(context, text, () => renderPlan(data));
    });

  plan
    .command('recompute')
    .description('recompute the plan now from the current estimates, and show it')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<PlanView>(
        'POST',
        '/v1/plan/recompute',
        undefined,
        undefined,
        ['widths'],
      );
      output(context, text, () => renderPlan(data));
    });
}

/**
 * One row per class and share: a mixed class (two adjacent plans of the frontier, so the budget is
 * spent exactly) has two rows, each with the share of arriving jobs it gets.
 */
export function renderPlan(p: PlanView): string {
  const inputs = p.inputs as {
    ratesPerHour?: Record<string, number>;
    clampedToMinimum?: boolean;
    uncappedBudget?: number;
  };
  const classes = Object.entries(p.widths);
  const epochs = Math.max(0, ...classes.flatMap(([, shares]) => shares.map((s) => s.widths.length)));
  // Counted from 1, as `jobs list` and `jobs show` count a job's statistical epoch (found trying boa as
  // a newcomer: e0 beside "epoch 1" read one column out).
  const head = ['class', 'jobs/h', 'share', ...Array.from({ length: epochs }, (_, j) => `e${j + 1}`)];
  const rows = classes.flatMap(([name, shares]) =>
    shares.map((s) => [
      name,
      fixed(inputs.ratesPerHour?.[name], 2),
      percent(s.share),
      ...Array.from({ length: epochs }, (_, j) => s.widths[j] ?? ''),
    ]),
  );
  const planning = planningNote(p, inputs);
  // The minimum of the rates the plan was made for: `boa frontier` and status give today's. Its own row,
  // paid first (the figure the budget is compared with) and allocated beside it, as `budget set` says it.
  // With no arrivals the minimum is a load of none, as `budget set` and `frontier` say it.
  const minimum = noArrivals(inputs.ratesPerHour)
    ? '- (no arrivals seen yet)'
    : `${minimumAsBudget(p)} at the plan's rates`;
  const summary = keyValues([
    [`plan #${p.id}`, `${p.solver} solver, computed ${when(p.computedAt)} in ${fixed(p.solveMs, 1)} ms`],
    ['budget', `${p.budget} GPU-hours/hour${planning}`],
    ['minimum feasible', minimum],
    // Keyed on the plan's own test (its planning budget, allocated GPU-hours, against the minimum), not
    // the paid budget against it: the two disagreed when the paid/allocated correction or the credit
    // moved the planning budget across the minimum (found in review).
    ...(inputs.clampedToMinimum ? [['queue', queueSays(p)] as [string, string]] : []),
    [
      'predicted',
      `average JCT ${duration(p.predicted.avgJctSeconds)} (${fixed(p.predicted.avgJctSeconds, 0)} s),` +
        ` allocated ${significant(p.predicted.gpuHoursPerHour)} GPU-hours/hour`,
    ],
  ]);
  return `${summary}${PREDICTED_NOTE}\n\nGPU widths by statistical epoch (e1 = first, as jobs list counts):\n${table(head, rows)}`;
}

/**
 * Why the plan was made with another budget than the one set, when it prints differently: the plan cap,
 * the credit's raise to the cheapest plan, or the paid/allocated correction. Compared as printed:
 * 40.00000001 against 40 read "planned for 40 allocated to pay for 40" (found in a newcomer trial).
 */
function planningNote(p: PlanView, inputs: { clampedToMinimum?: boolean; uncappedBudget?: number }): string {
  const planned = significant(p.planningBudget);
  if (planned === significant(p.budget)) return '';
  // Found trying boa as a newcomer: a first cifar10 job under a budget of 40 read "planned for 1.098
  // allocated to pay for 40", as if 39 of 40 paid GPUs idled, where the plan cap held it down.
  if (inputs.uncappedBudget !== undefined) {
    return (
      ` (planned for ${planned} allocated: the plan cap, a multiple of what the load needs, holds it down` +
      ' until more jobs come or budget goes unspent; boa budget get)'
    );
  }
  // The credit's raise to the cheapest plan pays for no such thing: a budget of 40 under a minimum of
  // 125.9 read "planned for 126.4 allocated to pay for 40" (found in the same trial); the queue line says why.
  if (inputs.clampedToMinimum && p.planningBudget >= p.minFeasibleBudget) {
    return ` (planned for ${planned} allocated: the cheapest plan, widened by the credit; see queue)`;
  }
  // The paid/allocated correction: the planner plans below the target when nodes are paid for but idle.
  return ` (planned for ${planned} allocated to pay for ${p.budget})`;
}

/** The minimum as paid, the allocated one beside it when they differ (absent before 2026-12-06: allocated). */
function minimumAsBudget(p: PlanView & { minFeasiblePaidBudget?: number }): string {
  const paid = p.minFeasiblePaidBudget ?? p.minFeasibleBudget;
  return significant(paid) !== significant(p.minFeasibleBudget)
    ? `${significant(paid)} GPU-hours/hour paid (${significant(p.minFeasibleBudget)} allocated to jobs)`
    : `${significant(p.minFeasibleBudget)} GPU-hours/hour`;
}

/** Why jobs may wait for the budget under a plan at the load's minimum. */
function queueSays(p: PlanView): string {
  const wait =
    'jobs wait for the budget when even it does not fit (there may be none waiting now: boa jobs list), and the JCT below leaves any wait out';
  // A planning budget at or above the minimum is the credit's raise of one below it: saying "the
  // planning budget is below the minimum" beside "planned for 128.2" would contradict it.
  return p.planningBudget < p.minFeasibleBudget
    ? `the planning budget is below the minimum: the cheapest plan is used, ${wait}`
    : `the budget, with its credit of budget unspent earlier, is below the minimum: the cheapest plan is used, widened by that credit; ${wait}`;
}
