/*
 * The dashboard's parts, the calls each is drawn from, and the 10 s refresh's rounds of those calls.
 * Each call goes on its own: a part is drawn as soon as the calls it needs have answered in a round, so
 * one slow call (the frontier, recomputed, up to 30 s) holds up only its own part (found in review: the
 * jobs, the nodes and the spend waited for it every round). A call still unanswered from a round before
 * is not sent again (at most one request in flight per call); its parts are marked stale until it is.
 */
/* global $, setHtml, escapeHtml, utcTime -- format.js */
/* global api, Unauthorized, serverNow -- api.js */
/* global redraw, spendSpec, frontierSpec -- charts.js */
/* global renderNumbers, renderHealth -- numbers.js */
/* global ACTIVE_SHOWN, renderTables, renderResizes, renderActiveJobs -- tables.js */
/* global FAILED_SHOWN, renderFailedJobs -- failed-jobs.js */
/* global renderNodeList -- node-list.js */
/* exported newPoller, round, markStale, problemsText -- used by app.js */
'use strict';

const ACTIVE = (state) => `/v1/jobs?state=${state}&limit=${ACTIVE_SHOWN}`;
const CALLS = {
  budget: '/v1/budget',
  plan: '/v1/plan',
  status: '/v1/status',
  ledger: '/v1/ledger?hours=24&points=96',
  frontier: '/v1/frontier',
  resizes: '/v1/resizes?limit=10',
  // Each node: its own call, so a failing one blanks only the list, not the counts above it.
  nodes: '/v1/nodes',
  running: ACTIVE('running'),
  waiting: ACTIVE('waiting'),
  // Jobs whose replicas still stop, holding GPUs: an ended one is in neither list above.
  stopping: `/v1/jobs?stopping=true&limit=${ACTIVE_SHOWN}`,
  // The next to start as the budget allows: the waiting list is the newest, not the queue's front.
  queue: `/v1/jobs?order=queue&limit=${ACTIVE_SHOWN}`,
  // The latest to fail, not the newest submitted: a long job failing now is listed.
  failed: `/v1/jobs?state=failed,lost&order=ended&limit=${FAILED_SHOWN}`,
};

/**
 * Each part of the page, the calls it needs, those it uses if answered, and how it is drawn: one failing
 * call blanks only its own.
 */
const PARTS = [
  {
    title: 'the health line',
    ids: ['health'],
    needs: ['status'],
    draw: (d) => renderHealth(d.status, serverNow()),
  },
  {
    title: 'the numbers',
    ids: ['numbers'],
    needs: ['budget', 'plan', 'status'],
    // The GPUs replicas still stopping hold, if answered.
    uses: ['stopping'],
    draw: (d) => renderNumbers(d.budget, d.plan, d.status, d.stopping?.jobs, ACTIVE_SHOWN),
  },
  {
    title: 'the plan, jobs by state and nodes',
    ids: ['widths', 'jobs', 'nodes'],
    needs: ['plan', 'status'],
    draw: (d) => renderTables(d.plan, d.status),
  },
  {
    title: 'the node list',
    ids: ['node-list'],
    needs: ['nodes'],
    draw: (d) => renderNodeList(d.nodes),
  },
  {
    title: 'the last resizes',
    ids: ['resizes'],
    needs: ['resizes'],
    draw: (d) => renderResizes(d.resizes.resizes),
  },
  {
    title: 'the active jobs',
    ids: ['active-jobs'],
    needs: ['running', 'waiting'],
    // The counts, the budget's queue order and its front, the jobs still stopping, if answered: the jobs
    // are listed without them, not blanked.
    uses: ['status', 'budget', 'queue', 'stopping'],
    draw: (d) =>
      renderActiveJobs(
        d.running.jobs,
        d.waiting.jobs,
        d.status?.jobs,
        d.budget?.control?.queueOrder,
        d.queue?.jobs,
        d.stopping?.jobs,
      ),
  },
  {
    title: 'the failed jobs',
    ids: ['failed-jobs'],
    needs: ['failed'],
    uses: ['status'],
    draw: (d) =>
      renderFailedJobs(d.failed.jobs, d.status ? d.status.jobs.failed + d.status.jobs.lost : undefined),
  },
  {
    title: 'the spend chart',
    ids: ['spend-chart'],
    needs: ['ledger', 'budget'],
    draw: (d) => redraw('spend-chart', spendSpec(d.ledger, d.budget.gpuHoursPerHour)),
  },
  {
    title: 'the frontier chart',
    ids: ['frontier-chart'],
    needs: ['frontier'],
    draw: (d) => redraw('frontier-chart', frontierSpec(d.frontier)),
  },
];

/**
 * One login's refresh. `isCurrent()`: false once logged out or in again, when its answers draw nothing
 * and say nothing. `accepted`: boa has answered the token; parts are drawn only from then (a chart drawn
 * while the dashboard is hidden measures its container as 0 wide). `onAnswer()` is called on each call
 * answered, `onUnauthorized()` on a 401. It keeps each call's last outcome, the call in flight (and
 * when it was sent), since when each call has been slow (a round found it still unanswered; until it is
 * answered), and each part's last error.
 */
function newPoller({ token, isCurrent, accepted, onAnswer, onUnauthorized }) {
  return {
    token,
    isCurrent,
    accepted,
    onAnswer,
    onUnauthorized,
    outcomes: {},
    inFlight: new Map(),
    slowSince: new Map(),
    errors: new Map(),
    rounds: 0,
    decided: 0,
    down: null,
  };
}

/**
 * A part is stale while a call it needs is slow (still unanswered from a round before, or timed out and
 * not answered since), and every part while boa is down (`down`): what it shows is from before; the
 * page's style marks it.
 */
function markStale(p) {
  for (const part of PARTS) {
    const stale = p.down !== null || part.needs.some((name) => p.slowSince.has(name));
    for (const id of part.ids) $(id).classList[stale ? 'add' : 'remove']('stale');
  }
}

const timedOut = (error) => error?.name === 'TimeoutError';

/** Sends one call; its outcome (`ok` and `value`, or `error`) once it is answered or fails. */
function send(p, name) {
  const call = { since: serverNow() };
  call.answered = api(CALLS[name], p.token)
    .then(
      (value) => ({ ok: true, value, at: serverNow() }),
      (error) => ({ ok: false, error }),
    )
    .then((outcome) => {
      p.inFlight.delete(name);
      if (!p.isCurrent()) return outcome;
      if (outcome.error instanceof Unauthorized) {
        p.onUnauthorized();
        return outcome;
      }
      p.outcomes[name] = outcome;
      // Slow since the first of its requests left unanswered, until one is answered: one timed out and
      // sent again is still said as slow since then, in the same words, so the top line is not announced
      // again each round (found in review: a frontier over 30 s came and went from it twice a cycle).
      if (!timedOut(outcome.error)) p.slowSince.delete(name);
      if (outcome.ok) p.onAnswer();
      markStale(p);
      return outcome;
    });
  p.inFlight.set(name, call);
  return call.answered;
}

/** Sends one call once the one in flight, if any, is answered: a refresh asked for shows what boa says now. */
async function sendAfter(p, name) {
  while (p.inFlight.has(name)) await p.inFlight.get(name).answered;
  return send(p, name);
}

/**
 * Draws a part from the calls' last outcomes, or says in its place why it cannot be. One draw of a part
 * at a time: two rounds' draws of a chart overlapping would leave two views.
 */
function drawPart(p, part) {
  const drawn = (part.drawn ?? Promise.resolve()).then(async () => {
    if (!p.isCurrent() || !p.accepted) return;
    const outcomes = part.needs.map((name) => p.outcomes[name]);
    if (outcomes.includes(undefined)) return;
    let error = outcomes.find((o) => !o.ok)?.error ?? null;
    if (!error) {
      try {
        // Its last answer, or none if it failed since: undefined.
        const used = (part.uses ?? []).map((name) => [name, p.outcomes[name]?.value]);
        await part.draw(
          Object.fromEntries([...used, ...part.needs.map((name, i) => [name, outcomes[i].value])]),
        );
      } catch (drawError) {
        error = drawError;
      }
    }
    p.errors.set(part, error);
    if (error) {
      const text = `could not show this: ${error.message}`;
      for (const id of part.ids) setHtml(id, `<p class="error">${escapeHtml(text)}</p>`);
    }
  });
  part.drawn = drawn.catch(() => {});
  return drawn;
}

/**
 * One round of calls: each not still in flight is sent (`fresh`: each is sent, after the one in flight if
 * any), and each part drawn once the calls it needs have answered. A part whose call failed is drawn
 * with the error once any call of the round is answered, and left as it was if none is (boa down, which
 * the top line says with the time of what is shown). The round's number and its calls' outcomes.
 */
async function round(p, fresh = false) {
  const seq = ++p.rounds;
  const sent = {};
  for (const name of Object.keys(CALLS)) {
    const call = p.inFlight.get(name);
    if (call && !fresh) {
      if (!p.slowSince.has(name)) p.slowSince.set(name, call.since);
    } else sent[name] = fresh ? sendAfter(p, name) : send(p, name);
  }
  markStale(p);
  let decide;
  const anyAnswered = new Promise((resolve) => (decide = resolve));
  for (const outcome of Object.values(sent)) void outcome.then((o) => o.ok && decide(true));
  const outcomes = Promise.all(Object.values(sent));
  void outcomes.then(() => decide(false));
  const draws = PARTS.filter((part) => part.needs.some((name) => name in sent)).map(async (part) => {
    // What it uses too, if sent: drawn from this round's answers where they come.
    const mine = await Promise.all([...part.needs, ...(part.uses ?? [])].map((name) => sent[name]));
    if (mine.some((o) => o && !o.ok) && !(await anyAnswered)) return;
    await drawPart(p, part);
  });
  const result = { seq, outcomes: await outcomes };
  await Promise.all(draws);
  return result;
}

/**
 * The top line while boa answers: what each part could not show, and each slow call, since when, and
 * the time of what its parts show.
 */
function problemsText(p) {
  const problems = new Set();
  for (const part of PARTS) {
    const error = p.errors.get(part);
    if (error) problems.add(error.message);
  }
  for (const [name, since] of p.slowSince) {
    const titles = PARTS.filter((part) => part.needs.includes(name)).map((part) => part.title);
    const last = p.outcomes[name];
    const shown = last?.ok ? `from ${utcTime(last.at)}` : 'not shown';
    problems.add(`${CALLS[name]} has not answered since ${utcTime(since)} (${titles.join(', ')}: ${shown})`);
  }
  return problems.size ? `boa: ${[...problems].join('; ')}` : '';
}
