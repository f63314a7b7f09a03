/*
 * The dashboard's last script, which starts the page: the operator API's calls (api), which part of
 * the page each one draws (one that fails blanks only its own part), the 10 s refresh, and the login:
 * the token is asked for once and kept in sessionStorage only once the service accepts it. What it
 * draws with is defined by the scripts before it (scripts.ts).
 */
/* global window, document, sessionStorage, fetch, setInterval, clearInterval, AbortSignal */
/* global $, setHtml, utcTime, escapeHtml -- format.js */
/* global redraw, spendSpec, frontierSpec -- charts.js */
/* global renderNumbers, renderHealth -- numbers.js */
/* global renderTables, renderResizes, ACTIVE_SHOWN, renderActiveJobs -- tables.js */
/* global FAILED_SHOWN, renderFailedJobs -- failed-jobs.js */
/* global closeLog, showLog, openedLog -- log-panel.js */
'use strict';

const TOKEN_KEY = 'boa.operatorToken';
const REFRESH_MS = 10_000;
/**
 * A call unanswered this long is given up on and said at the top: the refresh waits for its last round,
 * so one call that never answered would stop it for good.
 */
const CALL_TIMEOUT_MS = 30_000;

class Unauthorized extends Error {}
/** boa's own error answer (its JSON): boa is there and says why it did not do what was asked. */
class Refusal extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * How far boa's clock is ahead of the browser's, from its last answer's Date (to the second): the
 * health line compares the last tick, a time on boa's clock, with now on boa's clock (found in review:
 * a browser 2 hours fast read "no tick since ... the scheduler is failing" with every tick on time, and
 * one 2 hours slow read "last tick" for a scheduler stopped 10 minutes before).
 */
let serverAheadMs = 0;
const serverNow = () => Date.now() + serverAheadMs;

async function api(path, token) {
  const res = await fetch(path, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const date = Date.parse(res.headers.get('date') ?? '');
  if (Number.isFinite(date)) serverAheadMs = date - Date.now();
  if (res.status === 401) throw new Unauthorized('the token was refused');
  // boa never redirects: something in front of it did (a proxy's sign-in page once its session ran out).
  if (res.redirected) {
    throw new Error(
      `${path}: redirected to ${res.url} (${res.status}), not answered by boa: a proxy in front of it?`,
    );
  }
  // Not boa's JSON (a proxy in front answering 502 with a page): say which call and what status,
  // not JSON.parse's "Unexpected token '<'".
  const status = `${path}: ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  const body = await res.json().catch(() => {
    // Found in review: a 200 page read "boa has not answered since ... (/v1/budget: 200 OK)".
    throw new Error(
      res.ok ? `${status}, but not boa's JSON: a page from something in front of boa?` : status,
    );
  });
  // No plan yet (no budget set): the one refusal that is an answer, drawn as none. Any other 404 is said
  // (found in review: read as none, it was drawn as "Cannot read properties of null (reading 'lastTickAt')").
  if (res.status === 404 && body?.error?.code === 'no_plan') return null;
  if (!res.ok) {
    const message = body?.error?.message;
    throw message === undefined ? new Error(status) : new Refusal(res.status, message);
  }
  return body;
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
  // The latest to fail, not the newest submitted: a long job failing now is listed.
  failed: `/v1/jobs?state=failed,lost&order=ended&limit=${FAILED_SHOWN}`,
};

/** Each part of the page, the calls it needs and how it is drawn: one failing call blanks only its own. */
const SECTIONS = [
  { ids: ['health'], needs: ['status'], draw: (d) => renderHealth(d.status, serverNow()) },
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
    ids: ['failed-jobs'],
    needs: ['failed', 'status'],
    draw: (d) => renderFailedJobs(d.failed.jobs, d.status.jobs.failed + d.status.jobs.lost),
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
  // Every call failed: boa's own answer, where one came, says more than a call that got none.
  if (reasons.length === names.length) throw reasons.find((e) => e instanceof Refusal) ?? reasons[0];
  return { data, failed };
}

/** When the figures shown were read (UTC, as `updated` in the header says). */
let lastUpdated = null;
/** When the first refresh of the ones boa has not answered since was made; null while it answers. */
let downSince = null;
/** Whether boa answered (with errors) the refreshes since downSince, or did not answer them. */
let downAnswered = false;

/**
 * Writes the line at the top only when its words change: it is an alert, read out by a screen reader
 * each time it is written (found in review: re-announced every 10 s while boa was down).
 */
function sayAtTop(text) {
  if ($('error').textContent !== text) $('error').textContent = text;
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
      for (const id of section.ids) setHtml(id, `<p class="error">${escapeHtml(text)}</p>`);
      problems.push(error.message);
    }
  }
  lastUpdated = utcTime(serverNow());
  $('updated').textContent = `updated ${lastUpdated}`;
  downSince = null;
  sayAtTop(problems.length ? `boa: ${[...new Set(problems)].join('; ')}` : '');
}

/**
 * A refresh whose every call failed: said at the top, with the time of what is still shown (found in a
 * trial: "boa: Failed to fetch" below the last section, the old figures above it reading as current).
 * No answer at all (the service stopped, the network down) is said as that; boa answering with errors
 * (503 while it starts, a 500, a 429) as what it answered, not as silence (found in review). Since the
 * first refresh that failed, so the words stay the same, and are not announced again, while it lasts.
 */
function unreachable(error) {
  const answered = error instanceof Refusal;
  // From no answer to error answers (boa back, starting) is a new time: "since" is when this began.
  if (answered !== downAnswered) downSince = null;
  downAnswered = answered;
  downSince ??= utcTime(serverNow());
  const shown =
    lastUpdated === null
      ? `nothing is shown until it ${answered ? 'answers' : 'does'}`
      : `the figures shown are from ${lastUpdated}, not current`;
  const what = answered
    ? `boa has answered every call with an error since ${downSince} (${error.status}: ${error.message})`
    : `boa has not answered since ${downSince} (${error.message})`;
  sayAtTop(`${what}: ${shown}; the page asks again every ${REFRESH_MS / 1000} s.`);
}

/** One round of calls and drawing (the 10 s refresh). */
async function refresh(token) {
  await drawAll(await load(token));
}

let timer = null;
/**
 * The login a round belongs to, bumped at each login and logout: a round still in flight from before
 * draws nothing, says nothing and signs no one out (found in review: a late 401 from a forgotten
 * token's round sent the operator, signed in again with the rotated one, back to the form).
 */
let session = 0;
/**
 * Back to the login: the token is dropped, from the session and from the form, so none is kept. The
 * line at the top goes too: nothing refreshes now (found in review: "boa did not answer ... the page
 * asks again every 10 s" stayed above the form after boa came back with a rotated token).
 */
function showLogin(message) {
  session += 1;
  clearInterval(timer);
  downSince = null;
  sayAtTop('');
  closeLog();
  sessionStorage.removeItem(TOKEN_KEY);
  $('token').value = '';
  $('dashboard').classList.add('hidden');
  $('logout').classList.add('hidden');
  $('login').classList.remove('hidden');
  $('login-error').textContent = message ?? '';
}

/**
 * Signs in with `token` and refreshes every 10 s. `kept`: the token this tab kept (boa accepted it
 * before; the page reloaded or restored), which boa not answering now does not drop.
 */
async function start(token, kept = false) {
  const mine = ++session;
  clearInterval(timer);
  let shown = false;
  /** One round of calls; the first answered shows the dashboard, and keeps the token from then on. */
  const round = async () => {
    const loaded = await load(token);
    if (mine !== session) return;
    if (!shown) {
      shown = true;
      sessionStorage.setItem(TOKEN_KEY, token);
      $('login').classList.add('hidden');
      $('dashboard').classList.remove('hidden');
      $('logout').classList.remove('hidden');
    }
    // Drawn once the dashboard shows: a chart drawn while it is hidden measures its container as 0 wide
    // and stays blank until the next refresh.
    await drawAll(loaded);
  };
  try {
    await round();
  } catch (error) {
    if (mine !== session) return;
    // Kept only once the service has accepted it: a token that could not be sent (a pasted character
    // no header can carry) or a service that did not answer stays on the form, saying why.
    if (error instanceof Unauthorized) {
      return showLogin('That token was refused: use the operator token (locally: data/token).');
    }
    if (!kept) {
      const why = error instanceof Refusal ? `boa answered ${error.status}: ${error.message}` : error.message;
      return showLogin(`The token could not be checked: ${why}`);
    }
    // A kept one waits for boa, said at the top (found in review: a reload while boa did not answer
    // dropped it and left the form, which had to be filled in again once boa was back).
    $('logout').classList.remove('hidden');
    unreachable(error);
  }
  if (mine !== session) return;
  // One round at a time: a service slower than the refresh is not sent another 9 calls every 10 s
  // while the last are unanswered, and an older round never lands after a newer one.
  let busy = false;
  timer = setInterval(() => {
    if (busy) return;
    busy = true;
    round()
      .catch((error) => {
        if (mine !== session) return;
        if (error instanceof Unauthorized) showLogin('The token is no longer accepted.');
        else unreachable(error);
      })
      .finally(() => {
        busy = false;
      });
  }, REFRESH_MS);
}

$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  if (!token) return;
  // Said at once: a slow boa (up to CALL_TIMEOUT_MS) left the form as it was, as if the click was lost.
  $('login-error').textContent = 'Checking the token with boa...';
  void start(token);
});
/** A job's id, in the active or the failed jobs, opens its output below them. */
function openLog(event) {
  const button = event.target?.closest?.('button.job-log');
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (button && token) void showLog(token, Number(button.dataset.job));
}
$('active-jobs').addEventListener('click', openLog);
$('failed-jobs').addEventListener('click', openLog);
$('log-close').addEventListener('click', () => {
  const id = openedLog;
  closeLog();
  // Back where the operator was: the job's id that opened it, if still shown.
  document.querySelector(`button.job-log[data-job="${id}"]`)?.focus();
});
$('logout').addEventListener('click', (event) => {
  event.preventDefault();
  showLogin();
});

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) void start(saved, true);
else showLogin();
window.boaDashboard = { refresh: () => refresh(sessionStorage.getItem(TOKEN_KEY)) };
