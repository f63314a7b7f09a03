/*
 * The dashboard's tables: the plan's GPU widths by class and statistical epoch, the jobs by state, the
 * nodes, the last resizes, and the active jobs (running, those whose replicas still stop, and waiting
 * with why), whose ids open their log (log-panel.js).
 */
/* global setHtml, budgetText, timeHtml, table, escapeHtml, utcTime -- format.js */
/* exported renderTables, renderResizes, ACTIVE_SHOWN, renderActiveJobs, inLine -- used by app.js, job-state.js */
'use strict';

/** Why a node is not ready that means it is on its way up (the others: not-ready, no-gpus, cordoned). */
const BOOTING = new Set(['booting', 'registering']);

/**
 * The plan's classes shown, in its order: thousands made a table thousands of rows long, the active
 * jobs below it out of sight (found in review); `boa plan` lists them all.
 */
const PLAN_CLASSES_SHOWN = 20;

function renderTables(plan, status) {
  if (plan) {
    const classes = Object.entries(plan.widths);
    const shown = classes.slice(0, PLAN_CLASSES_SHOWN);
    const epochs = Math.max(0, ...shown.flatMap(([, shares]) => shares.map((s) => s.widths.length)));
    // Counted from 1, as the jobs table and the CLI count a job's statistical epoch.
    const head = ['class', 'share', ...Array.from({ length: epochs }, (_, j) => `e${j + 1}`)];
    const rows = shown.flatMap(([name, shares]) =>
      shares.map((s) => [
        escapeHtml(name),
        `${Math.round(s.share * 100)}%`,
        ...Array.from({ length: epochs }, (_, j) => s.widths[j] ?? ''),
      ]),
    );
    const more =
      classes.length > shown.length
        ? `<p class="shown">Shown: the first ${shown.length} of ${classes.length} classes (all: <code>boa plan</code>).</p>`
        : '';
    setHtml(
      'widths',
      `<p>plan #${plan.id}, ${escapeHtml(plan.solver)} solver, for ${budgetText(plan.budget)} GPU-hours per hour</p>${table(head, rows)}${more}`,
    );
  } else {
    setHtml('widths', '<p>No plan yet: set a budget (<code>npx boa budget set 40</code>).</p>');
  }
  setHtml(
    'jobs',
    table(
      ['state', 'jobs'],
      Object.entries(status.jobs).map(([state, n]) => [escapeHtml(state), n]),
    ),
  );
  const g = status.nodeGroup;
  // Not ready is not always booting: a node that lost its GPUs or went NotReady, or one cordoned for
  // removal, says why (docs/nodes.md), as `boa status` does.
  const notReady = Object.entries(g.notReady ?? {});
  const booting = notReady.filter(([why]) => BOOTING.has(why)).reduce((sum, [, n]) => sum + n, 0);
  const other = notReady.filter(([why]) => !BOOTING.has(why)).map(([why, n]) => `${n} ${escapeHtml(why)}`);
  // A replaced node group's nodes, paid until CloudFormation deletes it (docs/nodes.md point 8).
  const replaced = (g.replaced ?? []).map((r) => `${escapeHtml(r.name)}: ${r.nodes} on their way out`);
  setHtml(
    'nodes',
    table(
      // Actual: the nodes listed, each counted in one of the four cells after it, as `boa status` says.
      ['desired', 'actual', 'ready', 'booting', 'not ready', 'removing', 'replaced group', 'min', 'max'],
      [
        [
          g.desiredNodes ?? '-',
          g.actualNodes ?? '-',
          // null: the pool has not answered a listing since boa started.
          g.readyNodes ?? 'not listed yet',
          booting,
          other.join(', ') || '-',
          removingText(g.removing),
          replaced.join(', ') || '-',
          g.minSize ?? '-',
          g.maxSize ?? '-',
        ],
      ],
    ),
  );
}

/** Nodes named in the removing cell; `boa status` names them all. */
const REMOVING_SHOWN = 5;

/**
 * The nodes boa is removing (scale-in, a boot timed out, over the budget's ceiling), each with why and
 * how far along, as `boa status` says it: paid until terminated, they read only as "cordoned" or as
 * ready nodes, with nothing saying they were on their way out (found in review).
 */
function removingText(removing) {
  if (!removing?.length) return '-';
  const named = removing
    .slice(0, REMOVING_SHOWN)
    .map((r) => `${escapeHtml(r.node ?? r.nodeId)} (${escapeHtml(r.reason)}, ${escapeHtml(r.state)})`);
  const more = removing.length - named.length;
  return `${named.join(', ')}${more > 0 ? `, ${more} more (<code>boa status</code>)` : ''}`;
}

function renderResizes(resizes) {
  setHtml(
    'resizes',
    resizes.length
      ? table(
          ['at', 'to nodes', 'status'],
          resizes.map((r) => [timeHtml(r.at), r.target, escapeHtml(r.status)]),
        )
      : '<p>No resizes yet.</p>',
  );
}

const WAITS_FOR = {
  plan: 'waits for a plan (is a budget set?)',
  budget: 'queued for the budget',
  tick: 'waits for the next tick',
  nodes: 'waits for nodes to boot',
  gpus: 'waits for GPUs the running jobs hold',
  stopping: 'waits for GPUs stopping replicas still hold',
};
/** Shown per state: a queue of thousands must not make the page slow; the CLI lists them all. */
const ACTIVE_SHOWN = 20;

/** A job queued for the budget: its place in line (", #3 in line"), as `boa jobs list` says it; else ''. */
function inLine(job) {
  return job.waitingFor === 'budget' && job.queuePlace ? `, #${job.queuePlace} in line` : '';
}

/**
 * Replicas boa stops that still run within their grace, and the GPUs they still hold, as `boa jobs wait`
 * says it (src/cli/commands/jobs-stopping.ts); '' when none (or a service too old to say).
 */
function stoppingNote(job) {
  const s = job.stopping;
  if (!s) return '';
  const kill = s.killAt === null ? 'SIGTERM being sent' : `SIGKILL at ${utcTime(s.killAt)} at the latest`;
  return `stopping: ${s.replicas} replica${s.replicas === 1 ? '' : 's'} still running, ${s.gpus} GPU${s.gpus === 1 ? '' : 's'} held (${kill})`;
}

function jobNote(job) {
  const stopping = stoppingNote(job);
  const rest = jobNoteOfState(job);
  return [stopping, rest].filter(Boolean).join('; ');
}

/**
 * A job boa places nothing for until other replicas it stops are gone: whose, and when SIGKILL comes, as
 * `boa jobs list` says it (src/cli/commands/jobs-stopping.ts heldByNote); '' for any other job.
 */
function heldByNote(job) {
  const held = job.heldBy;
  if (!held) return '';
  const kill =
    held.killAt === null ? 'SIGTERM being sent' : `SIGKILL at ${utcTime(held.killAt)} at the latest`;
  return `waits for GPUs stopping replicas of job${held.jobs.length === 1 ? '' : 's'} ${held.jobs.join(', ')} still hold (${kill})`;
}

function jobNoteOfState(job) {
  const held = heldByNote(job);
  if (held) return held;
  if (job.waitingFor) return `${WAITS_FOR[job.waitingFor] ?? job.waitingFor}${inLine(job)}`;
  const notes = [];
  // As the CLI's `boa jobs list` says it (src/cli/commands/jobs.ts outcome): narrower than its plan and
  // why, the idle fill's lent GPUs apart, and a job in a new epoch since the last tick on the width of
  // the epoch before, which that tick changes.
  const planned = job.state === 'running' && job.widths ? job.widths[job.statEpoch] : undefined;
  const lent = job.state === 'running' && job.lentGpus > 0 ? job.lentGpus : 0;
  const booked = job.width - lent;
  const before = job.statEpoch > 0 && job.widths ? job.widths[job.statEpoch - 1] : undefined;
  const lentNote = `${lent} lent by the idle fill (idle on its nodes, not booked)`;
  if (
    planned !== undefined &&
    job.epochAfterLastTick === true &&
    job.narrowedBy !== 'budget' &&
    booked === before &&
    booked !== planned
  ) {
    const on =
      lent > 0
        ? `on ${job.width} GPUs: epoch ${job.statEpoch}'s plan's ${booked} and ${lentNote}`
        : `on ${booked} GPUs, epoch ${job.statEpoch}'s plan`;
    notes.push(
      `${on}; its plan gives ${planned} for epoch ${job.statEpoch + 1} from the next tick, as the budget and nodes allow`,
    );
  } else {
    if (planned !== undefined && booked < planned) {
      const why = job.narrowedBy === 'budget' ? "the budget's ceiling" : 'nodes booting or placement';
      notes.push(`on ${booked} of its plan's ${planned} GPUs (${why})`);
    }
    if (lent > 0) notes.push(`on ${job.width} GPUs: its plan's ${booked} and ${lentNote}`);
  }
  if (job.restarts > 0) {
    const code = job.exitCode === null ? '' : `exit ${job.exitCode}: `;
    const last = job.failureReason ? `, the last after ${code}${job.failureReason}` : '';
    notes.push(`${job.restarts} restart${job.restarts === 1 ? '' : 's'}${last}`);
  }
  return notes.join('; ');
}

/**
 * The order jobs queued for the budget start in (GET /v1/budget control.queueOrder): the list is by
 * submission, which read as the queue (found in review: the default serves the least work left first,
 * so the job at the top of the list could wait for hours while those below it started).
 */
function queueNote(waiting, waitingTotal, queueOrder) {
  if (!waiting.some((j) => j.waitingFor === 'budget')) return '';
  if (queueOrder === 'least-work-left') {
    return "Jobs queued for the budget start least expected work left first (by their class's profile; any waiting past the queue's bound, a day by default, go first), not in the order listed.";
  }
  if (queueOrder === 'submitted') {
    const older = waitingTotal - waiting.length;
    return `Jobs queued for the budget start oldest first${older > 0 ? `: the ${older} older waiting jobs not listed come before these` : ''}.`;
  }
  return '';
}

/**
 * The front of the queue for the budget (GET /v1/jobs?order=queue): which jobs start next, which the
 * list by submission cannot say ("the next 20 to start", asked in review).
 */
function queueFront(queued) {
  if (!queued || queued.length === 0) return '';
  const jobs = queued.map((j) => `#${j.queuePlace} job ${j.id}${j.name ? ` (${j.name})` : ''}, ${j.class}`);
  const of = queued.length >= ACTIVE_SHOWN ? ` (the first ${queued.length}; all: boa jobs list --queue)` : '';
  return `Next to start as the budget allows${of}: ${jobs.join('; ')}.`;
}

/**
 * `running` and `waiting` as GET /v1/jobs lists them (the newest ACTIVE_SHOWN of each, oldest first),
 * `counts` the jobs by state, `queueOrder` the budget's queue's and `queued` its front, `stopping` the
 * jobs whose replicas still stop (GET /v1/jobs?stopping=true; each undefined: not known).
 */
function renderActiveJobs(running, waiting, counts, queueOrder, queued, stopping) {
  // A job whose replicas still stop holds GPUs: one ended (cancelled, done, failed) is listed after the
  // running ones, with its state and note, until they are gone (found in review: its GPUs were paid and
  // held with no job on the page to explain them). One running or waiting is listed there if shown.
  const listed = new Set([...running, ...waiting].map((j) => j.id));
  const stopped = (stopping ?? []).filter((j) => !listed.has(j.id));
  const jobs = [...running, ...stopped, ...waiting];
  const rows = jobs.map((j) => [
    // A job boa runs has a log to show: its id opens it below the table.
    j.workload
      ? `<button type="button" class="job-log" data-job="${j.id}" title="show its output">${j.id}</button>`
      : j.id,
    escapeHtml(j.name ?? ''),
    escapeHtml(j.class),
    escapeHtml(j.state),
    // With the GPUs its stopping replicas still hold (an old generation's within its grace).
    j.stopping ? `${j.width}+${j.stopping.gpus} stopping` : j.width,
    // Booked to the budget so far (lent GPUs left out); '-' for a job from before boa kept it.
    typeof j.gpuHours === 'number' ? j.gpuHours.toFixed(2) : '-',
    // Counted from 1, as the CLI shows it (the API's statEpoch is 0-based).
    `${j.statEpoch + 1}${j.widths ? ` of ${j.widths.length}` : ''}`,
    timeHtml(j.startedAt ?? j.submittedAt),
    escapeHtml(jobNote(j)),
  ]);
  // Without the counts (GET /v1/status failed): a full list may have more behind it.
  const more = [
    [counts?.running, running.length, 'running'],
    [counts?.waiting, waiting.length, 'waiting'],
    // No count of them is given: a full list may have more behind it.
    [undefined, stopping?.length ?? 0, 'jobs whose replicas still stop'],
  ]
    .filter(([total, shown]) => (total === undefined ? shown >= ACTIVE_SHOWN : total > shown))
    .map(([total, shown, state]) =>
      total === undefined
        ? `the newest ${shown} ${state} (how many in all is not known now)`
        : `the newest ${shown} of ${total} ${state}`,
    );
  const notes = [
    more.length ? `Shown: ${more.join('; ')} (all: <code>boa jobs list</code>).` : '',
    escapeHtml(queueNote(waiting, counts?.waiting ?? waiting.length, queueOrder)),
    escapeHtml(queueFront(queued)),
  ].filter(Boolean);
  setHtml(
    'active-jobs',
    jobs.length
      ? `${table(['id', 'name', 'class', 'state', 'GPUs', 'GPU-h', 'epoch', 'since', 'note'], rows)}${notes
          .map((note) => `<p class="shown">${note}</p>`)
          .join('')}`
      : '<p>No job is waiting or running.</p>',
  );
}
