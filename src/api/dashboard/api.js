/*
 * The dashboard's calls to the operator API (api): boa's own refusals told apart from answers that are
 * not boa's (a proxy in front) and from no answer at all, each call given up on after 30 s, and boa's
 * clock read from its answers (serverNow).
 */
/* global fetch, AbortSignal */
/* exported CALL_TIMEOUT_MS, Unauthorized, Refusal, serverNow, api -- used by the scripts after it */
'use strict';

/**
 * A call unanswered this long is given up on and said: the refresh sends a call again only once its
 * last is answered, so one that never answered would stop its part for good.
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
