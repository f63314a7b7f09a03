/*
 * The dashboard's last script, which starts the page: the login (the token is asked for once and kept
 * in sessionStorage only once the service accepts it), the 10 s refresh of the page's parts (parts.js)
 * and the line at the top, which says what boa did not answer. What it draws with is defined by the
 * scripts before it (scripts.ts).
 */
/* global window, document, sessionStorage, setInterval, clearInterval */
/* global $, utcTime -- format.js */
/* global Refusal, serverNow -- api.js */
/* global newPoller, round, markStale, problemsText -- parts.js */
/* global closeLog, showLog, openedLog -- log-panel.js */
'use strict';

const TOKEN_KEY = 'boa.operatorToken';
const REFRESH_MS = 10_000;

/** When the figures shown were last read (UTC, as `updated` in the header says): boa's last answer. */
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

/**
 * A round's end, said at the top: boa down when every call the round sent failed, or when none could be
 * sent, every one still unanswered from before; else what the parts could not show and which calls are
 * slow. A round that ends after a later one (held by a slow call) does not undo what the later found.
 */
function settle(p, { seq, outcomes }) {
  if (!p.isCurrent()) return;
  if (outcomes.length === 0) p.down ??= new Error(`no call answered in ${REFRESH_MS / 1000} s`);
  else if (seq > p.decided) {
    p.decided = seq;
    const errors = outcomes.filter((o) => !o.ok).map((o) => o.error);
    p.down =
      errors.length === outcomes.length ? (errors.find((e) => e instanceof Refusal) ?? errors[0]) : null;
  }
  markStale(p);
  if (p.down) return unreachable(p.down);
  downSince = null;
  sayAtTop(problemsText(p));
}

/** The refresh of the login in force, if any (its calls in flight are not sent again while unanswered). */
let poller = null;

/** An answer from boa: the time in the header, and a token boa had not answered yet kept from now on. */
function answered(p) {
  lastUpdated = utcTime(serverNow());
  $('updated').textContent = `updated ${lastUpdated}`;
  if (p.accepted) return;
  p.accepted = true;
  sessionStorage.setItem(TOKEN_KEY, p.token);
  $('login').classList.add('hidden');
  $('dashboard').classList.remove('hidden');
  $('logout').classList.remove('hidden');
}

/** The refresh of login `mine` with `token` (parts.js newPoller), its answers and a 401 taken as above. */
function pollerFor(token, mine, accepted) {
  const p = newPoller({
    token,
    isCurrent: () => mine === session,
    accepted,
    onAnswer: () => answered(p),
    onUnauthorized: () =>
      showLogin(
        p.accepted
          ? 'The token is no longer accepted.'
          : 'That token was refused: use the operator token (locally: data/token).',
      ),
  });
  return p;
}

/** A round of every call, each sent anew, and the page drawn from them (asked for by tests). */
async function refresh(token) {
  if (poller?.token !== token || !poller.isCurrent()) poller = pollerFor(token, session, true);
  const p = poller;
  settle(p, await round(p, true));
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
  const p = (poller = pollerFor(token, mine, false));
  // Each round sends only the calls answered since the last (parts.js): a service slower than the
  // refresh is not sent the same call again every 10 s, and an older answer never lands after a newer.
  timer = setInterval(() => {
    // A token typed in is not asked about again while the form says it is being checked.
    if (p.accepted || kept) void round(p).then((result) => settle(p, result));
  }, REFRESH_MS);
  // The dashboard shows at the first answer (answered); its parts as their calls answer.
  const first = await round(p);
  if (mine !== session) return;
  if (!p.accepted) {
    // Kept only once the service has accepted it: a token that could not be sent (a pasted character
    // no header can carry) or a service that did not answer stays on the form, saying why.
    if (!kept) {
      const errors = first.outcomes.map((o) => o.error);
      const error = errors.find((e) => e instanceof Refusal) ?? errors[0];
      const why = error instanceof Refusal ? `boa answered ${error.status}: ${error.message}` : error.message;
      return showLogin(`The token could not be checked: ${why}`);
    }
    // A kept one waits for boa, said at the top (found in review: a reload while boa did not answer
    // dropped it and left the form, which had to be filled in again once boa was back).
    $('logout').classList.remove('hidden');
  }
  settle(p, first);
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
