/* The dashboard's script: runs in the browser, served as is. vega and vegaLite come from the service. */
/* global document, window, sessionStorage, fetch, setInterval, clearInterval, setTimeout, clearTimeout, URLSearchParams, vega, vegaLite, AbortController, TextDecoder */
'use strict';

const TOKEN_KEY = 'boa.operatorToken';
const REFRESH_MS = 10_000;
const $ = (id) => document.getElementById(id);

class Unauthorized extends Error {}

async function api(path, token) {
  const res = await fetch(path, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 401) throw new Unauthorized('the token was refused');
  // Not boa's JSON (a proxy in front answering 502 with a page): say which call and what status,
  // not JSON.parse's "Unexpected token '<'".
  const status = `${path}: ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const body = await res.json().catch(() => {
    throw new Error(status);
  });
  if (!res.ok && res.status !== 404) throw new Error(body?.error?.message ?? status);
  return res.ok ? body : null;
}

const fmt = (value, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? '-' : Number(value).toFixed(digits);

/** A budget: the operator's own number, as set (to 4 decimals), never rounded to 1 (12.25 read 12.3). */
function budgetText(value) {
  const text = String(Number(value.toFixed(4)));
  return text.includes('.') ? text : `${text}.0`;
}

/**
 * A time as the CLI, the API and the logs give it: ISO-8601 UTC to the second (2026-11-01T12:00:00Z).
 * Not the browser's zone: an operator comparing the page with `boa` or a log would be hours off.
 */
function utcTime(at) {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function minutes(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  return seconds >= 3600 ? `${(seconds / 3600).toFixed(1)} h` : `${(seconds / 60).toFixed(1)} min`;
}

function table(head, rows) {
  const th = head.map((h) => `<th>${h}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

async function draw(container, spec) {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'svg', container });
  await view.runAsync();
  return view;
}

const views = {};
async function redraw(name, spec) {
  views[name]?.finalize();
  views[name] = await draw($(name), spec);
}

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
  const x = { field: 'at', type: 'temporal', title: 'time (UTC)', scale: { type: 'utc' } };
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
        y: { field: 'value', type: 'quantitative', title: 'GPU-hours per hour' },
        // The series named up front: with no points yet (a service that just started) an empty
        // legend made vega size the chart 1.8e308 px tall; and each series keeps its colour.
        color: {
          field: 'series',
          type: 'nominal',
          title: null,
          scale: { domain: names },
          legend: { orient: 'bottom' },
        },
      },
    },
  ];
  if (budget !== null) {
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
  return { width: 'container', height: 260, layer: layers, config: { view: { stroke: null } } };
}

function frontierSpec(frontier) {
  const values = frontier.vertices.map((v) => ({ budget: v.gpuHoursPerHour, jct: v.avgJctSeconds / 60 }));
  const layers = [
    {
      data: { values },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'budget', type: 'quantitative', title: 'GPU-hours per hour', scale: { zero: false } },
        y: { field: 'jct', type: 'quantitative', title: 'average JCT (minutes)', scale: { type: 'log' } },
      },
    },
  ];
  if (frontier.budget !== null && frontier.budget !== undefined) {
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
  return { width: 'container', height: 260, layer: layers, config: { view: { stroke: null } } };
}

function number(id, label, value) {
  return `<div class="number"><div class="value" id="${id}">${value}</div><div class="label">${label}</div></div>`;
}

/** The window's span as read: "last 24 h", or what the record has while it is shorter (a new service). */
function windowText(w) {
  return w.hours < w.windowHours - 1e-6
    ? `average of the ${minutes(w.hours * 3600)} on record`
    : `last ${w.windowHours} h average`;
}

function renderNumbers(budget, plan, status) {
  const w = budget.window;
  const over = budget.gpuHoursPerHour !== null && w.paidGpuHoursPerHour > budget.gpuHoursPerHour;
  const nodes = status.nodeGroup;
  $('numbers').innerHTML = [
    number(
      'budget-value',
      'budget, GPU-hours per hour',
      budget.gpuHoursPerHour === null ? 'not set' : budgetText(budget.gpuHoursPerHour),
    ),
    number(
      'paid-value',
      `paid, ${windowText(w)}`,
      `<span class="${over ? 'over' : ''}">${fmt(w.paidGpuHoursPerHour)}</span>`,
    ),
    number('allocated-value', `allocated, ${windowText(w)}`, fmt(w.allocatedGpuHoursPerHour)),
    // No price known for the nodes' instance type: no $ tile rather than one that reads like no budget.
    budget.nodePricePerHour === null
      ? ''
      : number(
          'dollars-value',
          'budget $ per month',
          budget.dollarsPerMonth === null
            ? '-'
            : `$${Math.round(budget.dollarsPerMonth).toLocaleString('en-US')}`,
        ),
    number('plan-value', 'the plan allocates', plan ? fmt(plan.predicted.gpuHoursPerHour) : '-'),
    number('jct-value', 'predicted average JCT', plan ? minutes(plan.predicted.avgJctSeconds) : '-'),
    number('nodes-value', 'nodes desired / ready', `${nodes.desiredNodes ?? 0} / ${nodes.readyNodes}`),
    number('gpus-value', 'GPUs allocated / paid', `${status.gpus.allocated} / ${status.gpus.paid}`),
    budget.control
      ? number('below-value', belowLabel(budget.control.belowBudget), fmt(budget.control.belowBudget.gpus, 1))
      : '',
  ].join('');
}

/** Why fewer GPUs than the budget are paid for now (GET /v1/budget control.belowBudget). */
function belowLabel(below) {
  const label = 'GPUs below the budget now';
  if (below.gpus < 0.05) return label;
  if (below.waitingGpus > 0) return `${label}: jobs wait for nodes, the budget or a plan`;
  return `${label}: running jobs could use ${fmt(below.usableGpus, 1)}, no job present can use ${fmt(below.unusableGpus, 1)}`;
}

/** Why a node is not ready that means it is on its way up (the others: not-ready, no-gpus, cordoned). */
const BOOTING = new Set(['booting', 'registering']);

function renderTables(plan, status) {
  if (plan) {
    const epochs = Math.max(
      0,
      ...Object.values(plan.widths).flatMap((shares) => shares.map((s) => s.widths.length)),
    );
    // Counted from 1, as the jobs table and the CLI count a job's statistical epoch.
    const head = ['class', 'share', ...Array.from({ length: epochs }, (_, j) => `e${j + 1}`)];
    const rows = Object.entries(plan.widths).flatMap(([name, shares]) =>
      shares.map((s) => [
        escapeHtml(name),
        `${Math.round(s.share * 100)}%`,
        ...Array.from({ length: epochs }, (_, j) => s.widths[j] ?? ''),
      ]),
    );
    $('widths').innerHTML =
      `<p>plan #${plan.id}, ${escapeHtml(plan.solver)} solver, for ${budgetText(plan.budget)} GPU-hours per hour</p>${table(head, rows)}`;
  } else {
    $('widths').innerHTML = '<p>No plan yet: set a budget (<code>npx boa budget set 40</code>).</p>';
  }
  $('jobs').innerHTML = table(
    ['state', 'jobs'],
    Object.entries(status.jobs).map(([state, n]) => [escapeHtml(state), n]),
  );
  const g = status.nodeGroup;
  // Not ready is not always booting: a node that lost its GPUs or went NotReady, or one cordoned for
  // removal, says why (docs/nodes.md), as `boa status` does.
  const notReady = Object.entries(g.notReady ?? {});
  const booting = notReady.filter(([why]) => BOOTING.has(why)).reduce((sum, [, n]) => sum + n, 0);
  const other = notReady.filter(([why]) => !BOOTING.has(why)).map(([why, n]) => `${n} ${escapeHtml(why)}`);
  $('nodes').innerHTML = table(
    ['desired', 'ready', 'booting', 'not ready', 'min', 'max'],
    [
      [
        g.desiredNodes ?? '-',
        g.readyNodes,
        booting,
        other.join(', ') || '-',
        g.minSize ?? '-',
        g.maxSize ?? '-',
      ],
    ],
  );
}

function renderResizes(resizes) {
  $('resizes').innerHTML = resizes.length
    ? table(
        ['at', 'to nodes', 'status'],
        resizes.map((r) => [utcTime(r.at), r.target, escapeHtml(r.status)]),
      )
    : '<p>No resizes yet.</p>';
}

/**
 * Whether the service is working, not only answering: the last tick (flagged once three ticks are
 * missed: the scheduler's ticks fail, see the log's tick_failed), the planner's error, why jobs wait
 * for nodes and the node group's health, as `boa status` prints them.
 */
function renderHealth(status, now = Date.now()) {
  const lines = [];
  if (status.lastTickAt === null) lines.push(['', 'no tick yet']);
  else {
    const age = (now - Date.parse(status.lastTickAt)) / 1000;
    const late = age > 3 * status.tickSeconds;
    const at = utcTime(status.lastTickAt);
    lines.push(
      late
        ? [
            'over',
            `no tick since ${at} (${minutes(age)} ago, every ${status.tickSeconds} s expected): the scheduler is failing, see the service log`,
          ]
        : ['', `last tick ${at}`],
    );
  }
  if (status.plannerError) lines.push(['over', `plan failed: ${status.plannerError}`]);
  const group = status.nodeGroup;
  if (group.waitingReason) lines.push(['over', `jobs wait: ${group.waitingReason}`]);
  for (const issue of group.issues ?? []) lines.push(['over', `node group: ${issue.code}: ${issue.message}`]);
  $('health').innerHTML = lines
    .map(([cls, text]) => `<span class="${cls}">${escapeHtml(text)}</span>`)
    .join(' · ');
}

const WAITS_FOR = {
  plan: 'waits for a plan (is a budget set?)',
  budget: 'queued for the budget',
  tick: 'waits for the next tick',
  nodes: 'waits for nodes to boot',
};
/** Shown per state: a queue of thousands must not make the page slow; the CLI lists them all. */
const ACTIVE_SHOWN = 20;

function jobNote(job) {
  if (job.waitingFor) return WAITS_FOR[job.waitingFor] ?? job.waitingFor;
  const notes = [];
  // Running narrower than its plan: the budget's ceiling narrowed it, or its nodes still boot or
  // placement could not give it more (as the CLI says).
  const planned = job.state === 'running' && job.widths ? job.widths[job.statEpoch] : undefined;
  if (planned !== undefined && job.width < planned) {
    const why = job.narrowedBy === 'budget' ? "the budget's ceiling" : 'nodes booting or placement';
    notes.push(`on ${job.width} of its plan's ${planned} GPUs (${why})`);
  }
  if (job.restarts > 0) {
    const code = job.exitCode === null ? '' : `exit ${job.exitCode}: `;
    const last = job.failureReason ? `, the last after ${code}${job.failureReason}` : '';
    notes.push(`${job.restarts} restart${job.restarts === 1 ? '' : 's'}${last}`);
  }
  return notes.join('; ');
}

function renderActiveJobs(running, waiting, counts) {
  const jobs = [...running, ...waiting];
  const rows = jobs.map((j) => [
    // A job boa runs has a log to show: its id opens it below the table.
    j.workload
      ? `<button type="button" class="job-log" data-job="${j.id}" title="show its output">${j.id}</button>`
      : j.id,
    escapeHtml(j.name ?? ''),
    escapeHtml(j.class),
    escapeHtml(j.state),
    j.width,
    // Counted from 1, as the CLI shows it (the API's statEpoch is 0-based).
    `${j.statEpoch + 1}${j.widths ? ` of ${j.widths.length}` : ''}`,
    utcTime(j.startedAt ?? j.submittedAt),
    escapeHtml(jobNote(j)),
  ]);
  const more = [
    [counts.running, running.length, 'running'],
    [counts.waiting, waiting.length, 'waiting'],
  ]
    .filter(([total, shown]) => total > shown)
    .map(([total, shown, state]) => `the newest ${shown} of ${total} ${state}`);
  $('active-jobs').innerHTML = jobs.length
    ? `${table(['id', 'name', 'class', 'state', 'GPUs', 'epoch', 'since', 'note'], rows)}${
        more.length ? `<p class="shown">Shown: ${more.join('; ')} (all: <code>boa jobs list</code>).</p>` : ''
      }`
    : '<p>No job is waiting or running.</p>';
}

/** The most of a followed log the page keeps: its last 256 KiB, cut at a line. */
const LOG_KEPT = 256 * 1024;

/** `text` with only its last `max` characters, from the first whole line among them. */
function keepTail(text, max = LOG_KEPT) {
  if (text.length <= max) return text;
  const cut = text.slice(text.length - max);
  if (text[text.length - max - 1] === '\n') return cut;
  const newline = cut.indexOf('\n');
  return newline >= 0 ? cut.slice(newline + 1) : cut;
}

/**
 * A line as a terminal shows it: a progress bar redraws its line with \r, so only what follows a line's
 * last \r is kept (a \r\n ends a line as \n does).
 */
function redrawn(text) {
  return text.replace(/[^\n]*\r(?!\n|$)/g, '');
}

/** How often a followed job is asked after between its runs, as `boa jobs logs -f` does. */
const FOLLOW_POLL_MS = 2000;
/** How long a follow keeps asking a service that does not answer (restarting, say). */
const UNREACHABLE_MS = 60_000;
/** The most lines a request gives: a later generation's log is read from its start, up to this. */
const WHOLE_LOG = 10_000;
const FINAL_STATES = new Set(['done', 'cancelled', 'failed', 'lost']);
/** Why a followed job waits, in the words `boa jobs logs -f` says it with (those of `boa jobs list`). */
const WAITING_WORDS = {
  plan: 'waiting for a plan',
  budget: 'queued for the budget',
  tick: 'waiting for the next tick',
  nodes: 'waiting for nodes to boot',
};

const jobWho = (job) => `job ${job.id}${job.name ? ` (${job.name})` : ''}`;

/** "job 3 (first): failed (exit 1: rank 0 exited 1)": a followed job's state as the CLI says it. */
function describeJob(job) {
  const who = jobWho(job);
  if (job.state === 'running') return `${who}: running on ${job.width} GPU${job.width === 1 ? '' : 's'}`;
  if (job.state === 'waiting')
    return `${who}: ${job.waitingFor ? (WAITING_WORDS[job.waitingFor] ?? `waiting for ${job.waitingFor}`) : 'waiting'}`;
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}`;
  const why = job.state === 'failed' ? [code, job.failureReason].filter(Boolean).join(': ') : '';
  return `${who}: ${job.state}${why ? ` (${why})` : ''}`;
}

/** A job waiting out a restart's backoff: what ended its run, and when it runs again (as the CLI). */
function restartLine(job) {
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}`;
  const why = [code, job.failureReason].filter(Boolean).join(': ');
  const at = utcTime(job.restartNotBefore);
  return `${jobWho(job)}: its run ended${why ? ` (${why})` : ''}; restart ${job.restarts} at ${at}`;
}

/**
 * A running job whose generation has no log yet. `restartsSeen` is its restarts when the last run shown
 * began: more now means that run failed and this one waits out the backoff (restartNotBefore alone
 * does not say so: it stays set once the restart has run).
 */
function startingLine(job, restartsSeen) {
  if (job.restartNotBefore !== null && job.restarts > restartsSeen) return restartLine(job);
  return `${describeJob(job)}; generation ${job.generation} is starting`;
}

/**
 * Where a followed log cut off (the connection broke, boa restarted) goes on, from the answer that
 * broke off and the bytes of it received: `query` replaces the cut request's position (tail, cursor).
 * `exact`: from where it got to (the answer's cursor and skip plus the bytes), nothing lost or shown
 * twice; else (a service from before cursors) from its newest line.
 */
function resumeQuery(headers, bytes) {
  const cursor = headers.get('boa-log-cursor');
  if (cursor === null) return { exact: false, query: { tail: '1' } };
  return { exact: true, query: { cursor, skip: String(Number(headers.get('boa-log-skip') ?? 0) + bytes) } };
}

/** The bytes at the end of `bytes` that begin a UTF-8 character without finishing it (as the CLI's). */
function unfinishedCharBytes(bytes) {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/** A generation from its start (the cursor every executor reads as a log's beginning). */
const FROM_START = { tail: String(WHOLE_LOG), cursor: 'start' };

function logPath(id, generation, position) {
  const query = new URLSearchParams({ rank: '0', ...position, follow: 'true' });
  if (generation !== undefined) query.set('generation', String(generation));
  return `/v1/jobs/${id}/logs?${query}`;
}

/** Waits `ms`, or rejects as soon as the follow is stopped, its timer cleared: Close leaves none behind. */
function pause(ms, signal) {
  return new Promise((wake, stopped) => {
    if (signal.aborted) return stopped(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      stopped(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      wake();
    }, ms);
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * One request of a follow, asked again every poll while boa does not answer or is starting (restarted),
 * for up to a minute; its answer, whatever its status.
 */
async function ask(f, path) {
  let failingSince;
  for (;;) {
    let problem;
    try {
      const res = await fetch(path, { headers: { authorization: `Bearer ${f.token}` }, signal: f.signal });
      if (res.status !== 503 || (await refusal(res.clone())).code !== 'starting') return res;
      problem = 'boa is starting';
    } catch (error) {
      if (f.signal.aborted) throw error;
      problem = `boa did not answer (${error.message})`;
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > UNREACHABLE_MS)
      throw new Error(`${problem} for a minute; the job may still run: its id follows it again`);
    f.status(`${problem}; trying again`);
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}

/** boa's error of an answer that is not what was asked for, or its status. */
async function refusal(res) {
  const body = await res.json().catch(() => null);
  return {
    code: body?.error?.code ?? '',
    message: body?.error?.message ?? `${res.status} ${res.statusText}`,
  };
}

async function readJob(f) {
  const res = await ask(f, `/v1/jobs/${f.id}`);
  if (!res.ok) throw new Error((await refusal(res)).message);
  return res.json();
}

/**
 * Shows one generation's log (the newest one kept, when `generation` is undefined) as it is written,
 * until that run ends. Its generation, or undefined when no log is kept (not started yet, or gone).
 * `opened` is told the generation when its log begins. A stream cut off is asked again from where it
 * broke off (resumeQuery).
 */
async function streamLog(f, generation, position, opened) {
  let asked = { generation, position };
  let shown;
  for (;;) {
    const res = await ask(f, logPath(f.id, asked.generation, asked.position));
    if (!res.ok) {
      const error = await refusal(res);
      // None kept (yet); a job that launches itself never has one: said, not waited for.
      if (error.code === 'no_log' && !/launches itself/.test(error.message)) return shown;
      throw new Error(error.message);
    }
    if (shown === undefined) {
      shown = Number(res.headers.get('boa-generation'));
      opened(shown);
    }
    f.status(
      res.headers.get('boa-log-gap') === 'true'
        ? `following generation ${shown}: where the log had got to is no longer kept (rotated away while it was cut off); lines between are missing`
        : `following generation ${shown}: lines appear as the job writes them`,
    );
    let bytes = 0;
    // The last bytes that came: a cut inside a character is asked again from its start.
    let last = new Uint8Array(0);
    const decoder = new TextDecoder();
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        last = new Uint8Array([...last, ...value.subarray(-3)]).subarray(-3);
        f.write(decoder.decode(value, { stream: true }));
      }
      f.write(decoder.decode());
      return shown;
    } catch (error) {
      if (f.signal.aborted) throw error;
      const resume = resumeQuery(res.headers, bytes - unfinishedCharBytes(last));
      f.status(
        `the log broke off (${error.message}); following it again ${resume.exact ? 'from where it was' : 'from its newest line (lines written meanwhile may be missing)'}`,
      );
      asked = { generation: shown, position: resume.query };
      await pause(FOLLOW_POLL_MS, f.signal);
    }
  }
}

/** Asks after the job until it ends or runs a generation newer than `after`, saying what it waits for. */
async function nextGeneration(f, after) {
  for (;;) {
    const job = await readJob(f);
    if (FINAL_STATES.has(job.state)) return job;
    if (job.state === 'running' && job.generation > after && job.width > 0) return job;
    f.status(describeJob(job));
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}

/**
 * Rank 0's output of a job as `boa jobs logs -f` shows it: its last 200 lines and what it writes; then
 * each next generation (a restart, a rescale) from its start, after a separator line, saying between
 * runs what it waits for; until the job ends, said as the CLI says it.
 */
async function followJob(f) {
  let restartsSeen = (await readJob(f)).restarts;
  let shownAny = false;
  const opened = (generation) => {
    if (shownAny) f.separator(generation);
    shownAny = true;
    f.title(generation);
  };
  // Nothing kept yet (it waits, or its replica is not up): every generation from its present one on.
  let after = (await streamLog(f, undefined, { tail: '200' }, opened)) ?? (await readJob(f)).generation - 1;
  for (;;) {
    const job = await nextGeneration(f, after);
    const final = FINAL_STATES.has(job.state);
    // Generations that ran and ended between two looks (a run shorter than a poll): shown whole.
    for (let g = Math.max(1, after + 1); g < job.generation + (final ? 1 : 0); g++) {
      await streamLog(f, g, FROM_START, opened);
      after = g;
    }
    if (final) return f.status(describeJob(job));
    const shown = await streamLog(f, job.generation, FROM_START, opened);
    if (shown !== undefined) {
      after = shown;
      restartsSeen = job.restarts;
      continue;
    }
    f.status(startingLine(job, restartsSeen));
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}

let following = null;

/**
 * What the log gained since it was last drawn. Drawn at most every LOG_DRAW_MS, not per read: a
 * generation's log read from its start (a local one is capped at 64 MiB) redrew 256 KiB per read, and
 * 64 MiB took 5 to 6 s in headless Chromium (1 s batched). `logReplaces`: it was cut to its own last
 * part, which alone holds all that is kept.
 */
let logPending = '';
let logReplaces = false;
let logDraw = null;
const LOG_DRAW_MS = 100;

/** Drops the draw scheduled, if any (none at the page's load, where no timer is touched). */
function cancelDraw() {
  if (logDraw !== null) clearTimeout(logDraw);
  logDraw = null;
}

/** Draws what the log gained, kept at its newest line unless scrolled up to read. */
function drawLog() {
  cancelDraw();
  if (!logPending && !logReplaces) return;
  const pre = $('log-text');
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.textContent = keepTail(redrawn((logReplaces ? '' : pre.textContent) + logPending));
  logPending = '';
  logReplaces = false;
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}

function appendLog(text) {
  if (!text) return;
  logPending += text;
  if (logPending.length > 4 * LOG_KEPT) {
    logPending = keepTail(logPending, 2 * LOG_KEPT);
    logReplaces = true;
  }
  logDraw ??= setTimeout(drawLog, LOG_DRAW_MS);
}

/** Empties the log shown, dropping what was not drawn yet. */
function clearLog() {
  cancelDraw();
  logPending = '';
  logReplaces = false;
  $('log-text').textContent = '';
}

/** Stops showing a followed log: its request and any wait between runs end, so boa stops following too. */
function closeLog() {
  following?.abort();
  following = null;
  clearLog();
  $('log-section').classList.add('hidden');
}

/** Opens a job's rank 0 output below the active jobs and follows it until the job ends or Close. */
async function showLog(token, id) {
  following?.abort();
  const stop = new AbortController();
  following = stop;
  // Guarded: a read that lands as another log is opened must not write into it.
  const mine = () => following === stop;
  const f = {
    token,
    id,
    signal: stop.signal,
    status: (text) => {
      if (!mine()) return;
      // What it says follows what was written before it.
      drawLog();
      $('log-status').textContent = text;
    },
    write: (text) => mine() && appendLog(text),
    title: (generation) =>
      mine() && ($('log-title').textContent = `Job ${id}: the output of rank 0, generation ${generation}`),
    separator: (generation) => {
      if (!mine()) return;
      const text = logPending || $('log-text').textContent;
      appendLog(`${text && !text.endsWith('\n') ? '\n' : ''}--- job ${id}, generation ${generation} ---\n`);
    },
  };
  $('log-section').classList.remove('hidden');
  $('log-title').textContent = `Job ${id}: the output of rank 0`;
  clearLog();
  f.status('reading...');
  try {
    await followJob(f);
  } catch (error) {
    if (!stop.signal.aborted) f.status(`stopped following: ${error.message}`);
  }
}

const ACTIVE = (state) => `/v1/jobs?state=${state}&limit=${ACTIVE_SHOWN}`;
const CALLS = {
  budget: '/v1/budget',
  plan: '/v1/plan',
  status: '/v1/status',
  ledger: '/v1/ledger?hours=24&points=96',
  frontier: '/v1/frontier',
  resizes: '/v1/resizes?limit=10',
  running: ACTIVE('running'),
  waiting: ACTIVE('waiting'),
};

/** Each part of the page, the calls it needs and how it is drawn: one failing call blanks only its own. */
const SECTIONS = [
  { ids: ['health'], needs: ['status'], draw: (d) => renderHealth(d.status) },
  {
    ids: ['numbers'],
    needs: ['budget', 'plan', 'status'],
    draw: (d) => renderNumbers(d.budget, d.plan, d.status),
  },
  {
    ids: ['widths', 'jobs', 'nodes'],
    needs: ['plan', 'status'],
    draw: (d) => renderTables(d.plan, d.status),
  },
  { ids: ['resizes'], needs: ['resizes'], draw: (d) => renderResizes(d.resizes.resizes) },
  {
    ids: ['active-jobs'],
    needs: ['running', 'waiting', 'status'],
    draw: (d) => renderActiveJobs(d.running.jobs, d.waiting.jobs, d.status.jobs),
  },
  {
    ids: ['spend-chart'],
    needs: ['ledger', 'budget'],
    draw: (d) => redraw('spend-chart', spendSpec(d.ledger, d.budget.gpuHoursPerHour)),
  },
  {
    ids: ['frontier-chart'],
    needs: ['frontier'],
    draw: (d) => redraw('frontier-chart', frontierSpec(d.frontier)),
  },
];

/**
 * One round of calls. Throws Unauthorized when the token is refused, and an Error when no call got an
 * answer (the service unreachable); otherwise what came back and what failed, for `drawAll`.
 */
async function load(token) {
  const names = Object.keys(CALLS);
  const settled = await Promise.allSettled(names.map((name) => api(CALLS[name], token)));
  const data = {};
  const failed = {};
  settled.forEach((result, i) => {
    if (result.status === 'fulfilled') data[names[i]] = result.value;
    else failed[names[i]] = result.reason;
  });
  const reasons = Object.values(failed);
  if (reasons.some((e) => e instanceof Unauthorized)) throw new Unauthorized('the token was refused');
  if (reasons.length === names.length) throw reasons[0];
  return { data, failed };
}

/** Draws what `load` got and says what it could not. The charts take their container's width then. */
async function drawAll({ data, failed }) {
  const problems = [];
  for (const section of SECTIONS) {
    const missing = section.needs.find((name) => name in failed);
    let error = missing ? failed[missing] : null;
    if (!error) {
      try {
        await section.draw(data);
      } catch (drawError) {
        error = drawError;
      }
    }
    if (error) {
      const text = `could not show this: ${error.message}`;
      for (const id of section.ids) $(id).innerHTML = `<p class="error">${escapeHtml(text)}</p>`;
      problems.push(error.message);
    }
  }
  $('updated').textContent = `updated ${utcTime(Date.now())}`;
  $('error').textContent = problems.length ? `boa: ${[...new Set(problems)].join('; ')}` : '';
}

/** One round of calls and drawing (the 10 s refresh). */
async function refresh(token) {
  await drawAll(await load(token));
}

let timer = null;
/** Back to the login: the token is dropped, from the session and from the form, so none is kept. */
function showLogin(message) {
  clearInterval(timer);
  closeLog();
  sessionStorage.removeItem(TOKEN_KEY);
  $('token').value = '';
  $('dashboard').classList.add('hidden');
  $('logout').classList.add('hidden');
  $('login').classList.remove('hidden');
  $('login-error').textContent = message ?? '';
}

async function start(token) {
  let loaded;
  try {
    loaded = await load(token);
  } catch (error) {
    // Kept only once the service has accepted it: a token that could not be sent (a pasted character
    // no header can carry) or a service that did not answer stays on the form, saying why.
    if (error instanceof Unauthorized) {
      return showLogin('That token was refused: use the operator token (locally: data/token).');
    }
    return showLogin(`The token could not be checked: ${error.message}`);
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  $('login').classList.add('hidden');
  $('dashboard').classList.remove('hidden');
  $('logout').classList.remove('hidden');
  // Drawn once the dashboard shows: a chart drawn while it is hidden measures its container as 0 wide
  // and stays blank until the next refresh.
  await drawAll(loaded);
  clearInterval(timer);
  timer = setInterval(() => {
    refresh(token).catch((error) => {
      if (error instanceof Unauthorized) showLogin('The token is no longer accepted.');
      else $('error').textContent = `boa: ${error.message}`;
    });
  }, REFRESH_MS);
}

$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  if (token) void start(token);
});
$('active-jobs').addEventListener('click', (event) => {
  const button = event.target?.closest?.('button.job-log');
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (button && token) void showLog(token, Number(button.dataset.job));
});
$('log-close').addEventListener('click', () => closeLog());
$('logout').addEventListener('click', (event) => {
  event.preventDefault();
  showLogin();
});

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) void start(saved);
else showLogin();
window.boaDashboard = { refresh: () => refresh(sessionStorage.getItem(TOKEN_KEY)) };
