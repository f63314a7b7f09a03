import type { Command } from 'commander';
import type { budgetView } from '../../service/views.ts';
import { CliError, EXIT } from '../errors.ts';
import { contextOf, output } from '../context.ts';
import { counted, dollars, fixed, keyValues, significant, table, when } from '../format.ts';
import { isDecimal, parseNumber } from '../parse.ts';
import { needsLine, noArrivals } from '../load-needs.ts';
import { budgetQuestion } from './budget-questions.ts';
import { renderClassSpend } from './budget-classes.ts';

type BudgetView = ReturnType<typeof budgetView>;

export function addBudgetCommands(program: Command): void {
  const budget = program
    .command('budget')
    .description('the budget: GPU-hours per hour, as a time-average (1 GPU for 1 hour = 1)');

  budget
    .command('set')
    .description(
      'set the budget; below the minimum for the estimated load it is accepted with a warning (jobs queue)',
    )
    .argument('<gpuHoursPerHour>', 'average GPUs to pay for, e.g. 40')
    .option(
      '--yes',
      'on a terminal, do not ask before cutting the budget to under half, raising it over twice, or ' +
        'a first budget above the GPUs the node group can ever run',
    )
    .action(async (value: string, options: { yes?: boolean }, command: Command) => {
      const context = contextOf(command);
      // A value that is no number goes to the service as written: it knows the smallest accepted
      // budget and says it ("the service names it" said from here left the range to guess: a trial).
      const gpuHoursPerHour = isDecimal(value) ? parseNumber(value, 'gpuHoursPerHour') : value;
      if (typeof gpuHoursPerHour === 'number' && context.confirm && !options.yes) {
        const { data: now } = await context.client.json<BudgetView>('GET', '/v1/budget');
        const question = budgetQuestion(now, gpuHoursPerHour);
        if (question && !(await context.confirm(question)))
          throw new CliError('the budget is unchanged', EXIT.failed);
      }
      const { data, text } = await context.client
        .json<BudgetSetView>('PUT', '/v1/budget', { gpuHoursPerHour }, undefined, ['gpuHoursPerHour', 'plan'])
        .catch((error: unknown) => {
          throw withMinimumHint(error);
        });
      output(context, text, () => renderBudgetSet(data));
    });

  budget
    .command('get')
    .description('the budget, the paid and allocated averages over the window and since it was set, $/month')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<BudgetView>(
        'GET',
        '/v1/budget',
        undefined,
        undefined,
        ['gpuHoursPerHour', 'window', 'control'],
      );
      output(context, text, () => renderBudget(data));
    });
}

type BudgetSetView = BudgetView & {
  minFeasibleBudget: number;
  /** Absent from a service before 2026-12-06. */
  minFeasiblePaidBudget?: number;
  warning?: string | null;
  plan: {
    id: number;
    predictedGpuHoursPerHour: number;
    predictedAvgJctSeconds: number;
    ratesPerHour: Record<string, number>;
  } | null;
};

/**
 * " ($N/month)" after a budget, or nothing when the service knows no price for its nodes. Above the
 * most GPUs the node group can run, only those are paid, and the service's dollars are theirs: said so.
 */
function perMonth(b: {
  gpuHoursPerHour: number | null;
  dollarsPerMonth: number | null;
  maxGpus?: number | null;
}): string {
  const above = b.maxGpus != null && b.gpuHoursPerHour !== null && b.gpuHoursPerHour > b.maxGpus;
  if (b.dollarsPerMonth === null)
    return above ? ` (at most the node group's ${b.maxGpus} GPUs can be paid)` : '';
  return above
    ? ` (at most the node group's ${b.maxGpus} GPUs can be paid: ${dollars(b.dollarsPerMonth)}/month)`
    : ` (${dollars(b.dollarsPerMonth)}/month)`;
}

/** The numbers `boa plan` shows for the new budget: its minimum, and what the plan will spend. */
export function renderBudgetSet(data: BudgetSetView): string {
  const plan = data.plan;
  const jobsPerHour = plan ? Object.values(plan.ratesPerHour).reduce((sum, r) => sum + r, 0) : 0;
  const none = plan !== null && noArrivals(plan.ratesPerHour);
  // A new service has seen no arrivals: its plan expects to spend next to nothing, yet gives each job
  // that comes its widths. Said so, rather than "allocates 0.0003".
  const uses = !plan
    ? 'being computed for the new budget: see boa plan'
    : none
      ? `plan #${plan.id}: no arrivals seen yet, so it expects to spend next to nothing; each job that ` +
        'comes gets its widths (boa plan)'
      : `plan #${plan.id} allocates ${significant(plan.predictedGpuHoursPerHour)} GPU-hours/hour at the ` +
        `current ${fixed(jobsPerHour, 2)} jobs/hour (boa plan)`;
  // With no arrivals the minimum is a load of none, not one: `frontier` says "-" there too.
  // As a budget (paid), the figure the budget and its warning are compared with, as `frontier` shows
  // it: the allocated one alone read "minimum feasible 11.32" above "budget 5 is below 22.629".
  const paid = data.minFeasiblePaidBudget ?? data.minFeasibleBudget;
  const minimumText =
    significant(paid) !== significant(data.minFeasibleBudget)
      ? `${significant(paid)} GPU-hours/hour paid (${significant(data.minFeasibleBudget)} allocated to jobs)`
      : `${significant(data.minFeasibleBudget)} GPU-hours/hour`;
  const minimum = none ? '- (no arrivals seen yet)' : `${minimumText} at these arrival rates`;
  const rows: [string, string][] = [
    ['budget set', `${data.gpuHoursPerHour} GPU-hours/hour${perMonth(data)}`],
    ['minimum feasible', minimum],
    ['plan', uses],
  ];
  if (data.warning) rows.push(['warning', data.warning]);
  // Not with no arrivals seen: the plan row says so, and "few jobs arrive" read as a measurement.
  if (
    plan &&
    !none &&
    data.gpuHoursPerHour !== null &&
    plan.predictedGpuHoursPerHour < 0.5 * data.gpuHoursPerHour
  ) {
    rows.push(['note', 'few jobs arrive: even the widest useful widths spend less than the budget']);
  }
  return keyValues(rows);
}

export function renderBudget(b: BudgetView): string {
  const target =
    b.gpuHoursPerHour === null
      ? 'not set (boa budget set <gpuHoursPerHour>)'
      : `${b.gpuHoursPerHour} GPU-hours/hour${perMonth(b)}`;
  const head = keyValues([
    ['budget', target],
    ['set at', when(b.setAt)],
    [
      'price',
      b.nodePricePerHour === null
        ? `unknown for ${b.instanceType}: set BOA_NODE_PRICE_PER_HOUR (or nodePricePerHour) on the service`
        : `$${b.nodePricePerHour} per ${b.instanceType} node-hour`,
    ],
    // The window covers only the hours since the service started, at first.
    ...(b.paidDollarsPerMonth === null
      ? []
      : [
          [
            'paid $/month',
            `${dollars(b.paidDollarsPerMonth)} at the rate of the last ${hoursText(b.window.hours)}`,
          ] as [string, string],
        ]),
    ...backWithinLine(b.window.backWithinBudget, b.gpuHoursPerHour),
  ]);
  // Each average beside the budget it is held to: over the window, each budget for the hours it was in
  // force (after a cut the paid average is above the new budget for a day, and nothing is overspent).
  const averages = [
    [`last ${b.window.windowHours} h`, b.window, b.window.budgetGpuHoursPerHour] as const,
    ...(b.sinceSet ? [['since set', b.sinceSet, b.sinceSet.budgetGpuHoursPerHour] as const] : []),
  ];
  const rows = averages.map(([label, a, budgetAverage]) => [
    label,
    fixed(a.hours, 2),
    fixed(a.paidGpuHoursPerHour),
    fixed(a.allocatedGpuHoursPerHour),
    fixed(budgetAverage),
  ]);
  const control = b.control
    ? `\n${keyValues([
        [
          'ceiling',
          `${b.control.ceilingNodes === null ? '- nodes' : counted(b.control.ceilingNodes, 'node')} ` +
            `(${fixed(b.control.ceilingGpus ?? 0, 1)} GPUs) for the next ` +
            `${b.control.horizonHours} h keep the window's average within the budget, and every ` +
            `${b.window.windowHours}-hour window ending within ${b.control.lookaheadHours} h` +
            // Above what can exist, it is no limit: the group's maximum is (found in a newcomer trial).
            (b.maxGpus !== null && (b.control.ceilingGpus ?? 0) > b.maxGpus
              ? `; the node group holds at most ${b.maxGpus} GPUs`
              : ''),
        ],
        ...(b.control.heartbeatHoldNodes !== null
          ? [
              [
                'held',
                `at most ${counted(b.control.heartbeatHoldNodes, 'node')}: boa's heartbeat is not reaching CloudWatch, ` +
                  'and the budget guard would set that many (see the metrics_failed log)',
              ] as [string, string],
            ]
          : []),
        ['debt', debtLine(b.control.debtGpuHours ?? 0, b.window.windowHours - b.control.horizonHours)],
        [
          'load needs',
          `${needsLine(b.control.loadNeedsGpuHoursPerHour, b.control.loadNeedsPaidGpuHoursPerHour)} at least, on average, for the expected arrivals (estimated rates) and the jobs waiting`,
        ],
        [
          'queued',
          `${counted(b.control.queuedForBudget, 'job')} wait${b.control.queuedForBudget === 1 ? 's' : ''} for the budget${queueOrderSays(b.control.queueOrder)}`,
        ],
        ...belowBudgetLine(b.control.belowBudget),
        ...(b.control.draining
          ? [
              [
                'drain',
                'nothing submitted lately and nothing waits: the running jobs take the GPUs the budget allows',
              ] as [string, string],
            ]
          : []),
        ...(b.control.fillingToBudget
          ? [
              [
                'fill',
                'the window paid more than fillBelowBand under the budget and nothing waits: the running jobs take the GPUs the budget allows',
              ] as [string, string],
            ]
          : []),
        ...(b.control.planCapGpuHoursPerHour !== null &&
        b.control.planCapGpuHoursPerHour < (b.gpuHoursPerHour ?? 0)
          ? [
              [
                'plan cap',
                `plans use at most ${fixed(b.control.planCapGpuHoursPerHour, 1)} GPU-hours/hour ` +
                  '(planCapMultiple x what the load needs, more as budget goes unspent): the rest waits for jobs to come',
              ] as [string, string],
            ]
          : []),
        // Shown to a tenth: a credit that rounds to 0.0 is no line ("0.0 GPU-hours/hour more" read as a bug).
        ...(b.control.creditGpuHoursPerHour >= 0.05
          ? [
              [
                'credit',
                `plans get ${fixed(b.control.creditGpuHoursPerHour, 1)} GPU-hours/hour more from budget unspent earlier ` +
                  'in the window: the load needs most of the budget',
              ] as [string, string],
            ]
          : []),
        ...(b.control.rateConfidenceFactor > 1
          ? [
              [
                'rate bound',
                `plans are made for ${fixed(b.control.rateConfidenceFactor, 2)}x the estimated load ` +
                  '(rateConfidence): fewer arrivals seen, more caution',
              ] as [string, string],
            ]
          : []),
        ...(b.control.firstDayJobsPerHour > 0
          ? [
              [
                'first day',
                `every class without a prior rate is planned with ${fixed(b.control.firstDayJobsPerHour, 2)} more jobs/hour ` +
                  '(firstDayArrivals) until the rate window is full: classes not seen yet are not planned at 0',
              ] as [string, string],
            ]
          : []),
        ...firstDayLine(b.control.rateWindow),
        ...(b.control.rateRiseFactor > 1
          ? [
              [
                'rate rise',
                `plans are made for ${fixed(b.control.rateRiseFactor, 2)}x the window's estimated load: ` +
                  'submissions of the last hours are a step up (rateRiseHours)',
              ] as [string, string],
            ]
          : []),
        ...(b.control.demandRatio > 1
          ? [
              [
                'demand ratio',
                `the plan was made with the budget divided by ${fixed(b.control.demandRatio, 2)}: ` +
                  'the plans allocated more than they expected (demandHalfLifeHours)',
              ] as [string, string],
            ]
          : []),
        ...(b.control.warmupFactor < 1
          ? [
              [
                'warm-up',
                `planning with ${fixed(100 * b.control.warmupFactor, 0)}% of the budget, rising to all of it`,
              ] as [string, string],
            ]
          : []),
      ])}`
    : '';
  const byClass = renderClassSpend(b.window.allocatedByClass, b.window);
  return `${head}\n${table(['average over', 'hours', 'paid GPU-h/h', 'allocated GPU-h/h', 'budget GPU-h/h'], rows)}${byClass}${control}`;
}

/**
 * While the window's paid average is over its budget: when it is back within it, if the GPUs paid now
 * stay paid (old spend leaves the window as it slides), or that it is not at that rate.
 */
function backWithinLine(
  back: { at: string | null; paidGpusNow: number } | null,
  budget: number | null,
): Array<[string, string]> {
  if (!back) return [];
  const paid = counted(back.paidGpusNow, 'GPU');
  return [
    [
      'back within',
      back.at === null
        ? `not at the current rate: ${paid} paid now, above the budget ${budget ?? '-'}`
        : `the window's paid average is within its budget from ${when(back.at)} on, if paid stays at ${paid}, as now`,
    ],
  ];
}

/**
 * While the rate window is not yet full, how much of it is observed and which classes the plan gives
 * nothing because none of their jobs has come yet, with what plans for them.
 */
function firstDayLine(window: {
  observedHours: number;
  windowHours: number;
  plannedAtZero: string[];
}): Array<[string, string]> {
  if (window.observedHours >= window.windowHours) return [];
  const observed = `${fixed(window.observedHours, 1)} of the rate window's ${window.windowHours} h observed`;
  const unseen =
    window.plannedAtZero.length > 0
      ? `; planned at 0 until one of their jobs comes: ${window.plannedAtZero.join(', ')} ` +
        '(boa history import, or boa classes put --prior-rate, plans for them)'
      : '';
  return [['rates', observed + unseen]];
}

/** A 422 states the minimum; add the smallest budget (2 decimals) that would be accepted. */
function withMinimumHint(error: unknown): unknown {
  if (!(error instanceof CliError) || error.exitCode !== EXIT.badInput || !error.body) return error;
  const minimum = (JSON.parse(error.body) as { error: { minFeasibleBudget?: number } }).error
    .minFeasibleBudget;
  if (typeof minimum !== 'number') return error;
  const accepted = Math.ceil(minimum * 100) / 100;
  return new CliError(`${error.message} (try: boa budget set ${accepted})`, error.exitCode, error.body);
}

/** Why the cluster pays less than the budget now, when it does (GPUs, to a tenth). */
function belowBudgetLine(below: {
  gpus: number;
  waitingGpus: number;
  usableGpus: number;
  unusableGpus: number;
}): Array<[string, string]> {
  if (below.gpus < 0.05) return [];
  const paid = `${fixed(below.gpus, 1)} GPUs fewer than the budget are paid for now`;
  if (below.waitingGpus > 0)
    return [['below budget', `${paid}, while jobs wait (for nodes, the budget or a plan)`]];
  return [
    [
      'below budget',
      `${paid}: running jobs could use ${fixed(below.usableGpus, 1)} at half a GPU's speedup per GPU or better, ` +
        `no job present can use ${fixed(below.unusableGpus, 1)}`,
    ],
  ];
}

/**
 * Spent above the budget in what the ceiling counts (the window as it will be one horizon from now:
 * its last `hours`, or less while it is younger), or how far under it.
 */
/** The queue's order as `queued` says it; nothing from a service older than the setting. */
function queueOrderSays(order: string | undefined): string {
  if (order === 'least-work-left') return ' (least work left first)';
  if (order === 'submitted') return ' (oldest first)';
  return '';
}

function debtLine(debtGpuHours: number, hours: number): string {
  // Since the first budget, not the last: a changed budget keeps what was paid and promised before it.
  const where = `in the window's last ${fixed(hours, 0)} h (or since a budget was first set)`;
  return debtGpuHours > 0.005
    ? `${fixed(debtGpuHours, 2)} GPU-hours above the budget ${where}`
    : `none (${fixed(Math.max(0, -debtGpuHours), 2)} GPU-hours under the budget ${where})`;
}

function hoursText(hours: number): string {
  return hours < 1 ? `${Math.max(1, Math.round(hours * 60))} min` : `${fixed(hours, hours < 10 ? 1 : 0)} h`;
}
