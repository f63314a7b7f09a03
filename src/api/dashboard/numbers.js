/*
 * The dashboard's current numbers as tiles (the budget, what is paid and allocated over the budget's
 * window and, while over, when it is back within, the plan, nodes and GPUs, the ceiling on GPUs paid,
 * how far below the budget and why), and the health line above them (the last tick, the planner's
 * error, why jobs wait for nodes, the node group's issues).
 */
/* global $, setHtml, fmt, budgetText, utcTime, minutes, escapeHtml -- format.js */
/* exported renderNumbers, renderHealth -- used by app.js */
'use strict';

function number(id, label, value) {
  return `<div class="number"><div class="value" id="${id}">${value}</div><div class="label">${label}</div></div>`;
}

/** The window's span as read: "last 24 h", or what the record has while it is shorter (a new service). */
function windowText(w) {
  return w.hours < w.windowHours - 1e-6
    ? `average of the ${minutes(w.hours * 3600)} on record`
    : `last ${w.windowHours} h average`;
}

/**
 * A spend tile's unit, said as the budget's tile says it (found in a newcomer trial: the paid, allocated
 * and plan tiles were bare numbers).
 */
const PER_HOUR = 'GPU-hours per hour';

/**
 * `stopping`: the jobs whose replicas still stop (GET /v1/jobs?stopping=true, the newest `shownAtMost`;
 * undefined: not known), whose GPUs the GPUs tile says apart.
 */
function renderNumbers(budget, plan, status, stopping, shownAtMost) {
  const w = budget.window;
  // Over what the window was promised (each budget for its hours), not over the budget now: after a cut
  // the window's average stays above the new budget for a day with nothing overspent.
  const promised = w.budgetGpuHoursPerHour ?? budget.gpuHoursPerHour;
  const over = promised !== null && w.paidGpuHoursPerHour > promised;
  const changed = promised !== null && Math.abs(promised - budget.gpuHoursPerHour) >= 0.05;
  const nodes = status.nodeGroup;
  setHtml(
    'numbers',
    [
      number(
        'budget-value',
        `budget, ${PER_HOUR}`,
        budget.gpuHoursPerHour === null ? 'not set' : budgetText(budget.gpuHoursPerHour),
      ),
      number(
        'paid-value',
        `paid, ${PER_HOUR}, ${windowText(w)}${changed ? ` (the budgets in force over it: ${fmt(promised)})` : ''}${backWithinText(w.backWithinBudget)}`,
        `<span class="${over ? 'over' : ''}">${fmt(w.paidGpuHoursPerHour)}</span>`,
      ),
      number(
        'allocated-value',
        `allocated, ${PER_HOUR}, ${windowText(w)}${byClassText(w.allocatedByClass)}`,
        fmt(w.allocatedGpuHoursPerHour),
      ),
      // No price known for the nodes' instance type: no $ tile rather than one that reads like no budget.
      budget.nodePricePerHour === null
        ? ''
        : number(
            'dollars-value',
            // Above the node group's maximum the service's dollars are those GPUs', not the budget's.
            budget.maxGpus != null && budget.gpuHoursPerHour > budget.maxGpus
              ? `budget $ per month (at most the node group's ${budget.maxGpus} GPUs)`
              : 'budget $ per month',
            budget.dollarsPerMonth === null
              ? '-'
              : `$${Math.round(budget.dollarsPerMonth).toLocaleString('en-US')}`,
          ),
      number('plan-value', planLabel(plan), plan ? fmt(plan.predicted.gpuHoursPerHour) : '-'),
      number('jct-value', 'predicted average JCT', plan ? minutes(plan.predicted.avgJctSeconds) : '-'),
      number(
        'nodes-value',
        'nodes desired / ready',
        // null: not known yet (the node group not read since boa started), not 0 asked for.
        `${nodes.desiredNodes ?? '-'} / ${nodes.readyNodes ?? '-'}`,
      ),
      number(
        'gpus-value',
        gpusLabel(status.gpus, stopping, shownAtMost),
        `${status.gpus.allocated} / ${status.gpus.paid}`,
      ),
      budget.control?.ceilingGpus == null
        ? ''
        : number('ceiling-value', ceilingLabel(budget), fmt(budget.control.ceilingGpus)),
      budget.control
        ? number(
            'below-value',
            belowLabel(budget.control.belowBudget),
            fmt(budget.control.belowBudget.gpus, 1),
          )
        : '',
    ].join(''),
  );
}

/**
 * Where the window's allocated GPU-hours went (GET /v1/budget window.allocatedByClass, most first): the
 * three largest classes' shares and how many more, so the tile stays one line.
 */
function byClassText(rows) {
  if (!rows || rows.length === 0) return '';
  const name = (r) => (r.className === null ? 'before classes were kept' : escapeHtml(r.className));
  const shown = rows.slice(0, 3).map((r) => `${name(r)} ${Math.round(100 * r.share)}%`);
  const more = rows.length > 3 ? `, ${rows.length - 3} more` : '';
  return `: ${shown.join(', ')}${more}`;
}

/**
 * Allocated is the plan's, as the spend chart counts it; GPUs the idle fill lends on top, and those
 * replicas still stopping hold (allocated to no job, paid: found in review, "0 / 4" after a cancel with
 * nothing saying why), are said apart.
 */
function gpusLabel(gpus, stopping, shownAtMost) {
  const label = 'GPUs allocated / paid';
  const held = (stopping ?? []).reduce((sum, j) => sum + (j.stopping?.gpus ?? 0), 0);
  // A full page of them may have more behind it.
  const atLeast = stopping && stopping.length >= shownAtMost ? 'at least ' : '';
  const notes = [
    gpus.lent > 0 ? `${gpus.lent} more lent by the idle fill` : '',
    held > 0 ? `${atLeast}${held} held by replicas still stopping` : '',
  ].filter(Boolean);
  return notes.length ? `${label} (${notes.join('; ')})` : label;
}

/**
 * While the window's paid average is over its budget: from when it is within it if the GPUs paid now
 * stay paid (GET /v1/budget window.backWithinBudget, as `boa budget get` says it), or that it is not
 * at that rate.
 */
function backWithinText(back) {
  if (!back) return '';
  const paid = `${back.paidGpusNow} GPU${back.paidGpusNow === 1 ? '' : 's'}`;
  return back.at === null
    ? `; not back within the budget at the current rate (${paid} paid now)`
    : `; within the budget from ${utcTime(back.at)} if paid stays at ${paid}, as now`;
}

/**
 * The plan's spend, and why it is the cheapest plan when it is (found in a trial: "the plan allocates
 * 81.93" beside a budget of 40.0, with nothing saying why; `boa plan` says it). clampedToMinimum compares
 * the planning budget, not the budget, with the minimum: only when the budget itself is below it do jobs
 * queue with spend held at the budget (found in review: a budget of 40 planned at 30 against a minimum of
 * 35 was said to be below 35).
 */
function planLabel(plan) {
  const label = `the plan allocates, ${PER_HOUR}`;
  // Found trying boa as a newcomer: a budget of 40 beside "the plan allocates 5.81", nothing saying why.
  if (plan?.inputs?.uncappedBudget !== undefined && !plan.inputs.clampedToMinimum) {
    return `${label}: held by the plan cap, a multiple of what the expected load needs, until more jobs come or budget goes unspent`;
  }
  if (!plan?.inputs?.clampedToMinimum) return label;
  const minimum = `the minimum ${fmt(plan.minFeasibleBudget)} the expected load needs`;
  if (plan.budget < plan.minFeasibleBudget) {
    // The budget is paid: the minimum as paid, as `boa budget set` and `boa plan` name it, the GPUs it
    // allocates to jobs beside it (minFeasiblePaidBudget: absent from a service before 2026-12-06).
    const paid = plan.minFeasiblePaidBudget ?? plan.minFeasibleBudget;
    const asBudget =
      fmt(paid) === fmt(plan.minFeasibleBudget)
        ? minimum
        : `the minimum ${fmt(paid)} paid (${fmt(plan.minFeasibleBudget)} allocated to jobs) the expected load needs`;
    return `${label}: the cheapest, as the budget is below ${asBudget}; jobs wait for the budget when even the cheapest plan does not fit, and spend is held at the budget`;
  }
  // A planning budget at the minimum or above is the credit's raise of one below it (compute.ts): "the
  // planning budget 39.90 is below the minimum 38.00" would contradict itself.
  if (plan.planningBudget >= plan.minFeasibleBudget) {
    return (
      `${label}: the cheapest, widened by the credit of budget unspent earlier, as the budget corrected ` +
      `for GPUs paid but not booked by the plan, lent ones included, warm-up and the plan cap, with that credit, is below ${minimum}`
    );
  }
  return (
    `${label}: the cheapest, as the planning budget ${fmt(plan.planningBudget)} (the budget ` +
    `corrected for GPUs paid but not booked by the plan, lent ones included, warm-up, credit or debt and the plan cap) is below ${minimum}`
  );
}

/**
 * The ceiling on the GPUs paid over the next horizon that keeps the window's average within the budget,
 * and why it is above or below the budget, as `boa budget get` says it. Found in review: 48 GPUs paid
 * beside a budget of 40 and "0.0 GPUs below the budget now", with nothing on the page saying that the
 * budget is an average the window had room in; nor why, with jobs queued, fewer than 40 were paid.
 */
function ceilingLabel(budget) {
  const c = budget.control;
  const nodes = c.ceilingNodes === null ? '' : `, ${c.ceilingNodes} node${c.ceilingNodes === 1 ? '' : 's'}`;
  const hours = budget.window.windowHours;
  let label = `ceiling: GPUs paid at most for the next ${c.horizonHours} h${nodes}, keeping the ${hours} h average within the budget`;
  if (c.ceilingGpus > budget.gpuHoursPerHour) {
    label += `; above the budget, which is a ${hours} h average the window has room in`;
  } else if (c.ceilingGpus < budget.gpuHoursPerHour) {
    label += '; below the budget while spend above it earlier in the window is paid back';
  }
  if (budget.maxGpus != null && c.ceilingGpus > budget.maxGpus) {
    label += `; the node group holds at most ${budget.maxGpus} GPUs`;
  }
  if (c.heartbeatHoldNodes !== null && c.heartbeatHoldNodes !== undefined) {
    label +=
      `; held at ${c.heartbeatHoldNodes} node${c.heartbeatHoldNodes === 1 ? '' : 's'}: boa's heartbeat is not ` +
      'reaching CloudWatch, and the budget guard would set that many (see the metrics_failed log)';
  }
  return label;
}

/** Why fewer GPUs than the budget are paid for now (GET /v1/budget control.belowBudget). */
function belowLabel(below) {
  const label = 'GPUs below the budget now';
  if (below.gpus < 0.05) return label;
  if (below.waitingGpus > 0) return `${label}: jobs wait for nodes, the budget or a plan`;
  return `${label}: running jobs could use ${fmt(below.usableGpus, 1)}, no job present can use ${fmt(below.unusableGpus, 1)}`;
}

/**
 * Whether the service is working, not only answering: the last tick (flagged once three ticks are
 * missed: the scheduler's ticks fail, see the log's tick_failed), the planner's error, why jobs wait
 * for nodes and the node group's health, as `boa status` prints them. Shown in #health; said to a screen
 * reader by #health-said, in words that change only when the health does: the line shown changes at
 * each tick ("last tick ..."), and while ticks are late at each refresh ("3.2 min ago"), which re-read
 * the whole line every 10 s (found in review).
 */
function renderHealth(status, now = Date.now()) {
  // Each: its class, its words shown, its words said.
  const lines = [];
  if (status.lastTickAt === null) lines.push(['', 'no tick yet', 'no tick yet']);
  else {
    const age = (now - Date.parse(status.lastTickAt)) / 1000;
    const late = age > 3 * status.tickSeconds;
    const at = utcTime(status.lastTickAt);
    const failing = 'the scheduler is failing, see the service log';
    lines.push(
      late
        ? [
            'over',
            `no tick since ${at} (${minutes(age)} ago, every ${status.tickSeconds} s expected): ${failing}`,
            `no tick since ${at}: ${failing}`,
          ]
        : ['', `last tick ${at}`, 'the scheduler ticks on time'],
    );
  }
  const over = (text) => ['over', text, text];
  if (status.plannerError) lines.push(over(`plan failed: ${status.plannerError}`));
  if (status.executorError)
    lines.push(
      over(
        `jobs neither start nor stop: the executor fails since ${utcTime(status.executorError.since)}: ${status.executorError.message}`,
      ),
    );
  // Stored classes past the speedup-table bound, left out of plans: their jobs wait (status.classesLeftOut).
  if (status.classesLeftOut) lines.push(over(status.classesLeftOut.message));
  const group = status.nodeGroup;
  if (group.waitingReason) lines.push(over(`jobs wait: ${group.waitingReason}`));
  for (const issue of group.issues ?? []) lines.push(over(`node group: ${issue.code}: ${issue.message}`));
  setHtml(
    'health',
    lines.map(([cls, text]) => `<span class="${cls}">${escapeHtml(text)}</span>`).join(' · '),
  );
  const said = lines.map(([, , words]) => words).join('; ');
  if ($('health-said').textContent !== said) $('health-said').textContent = said;
}
