/*
 * The log section of the page: a followed job's output drawn in batches, kept to its last 256 KiB from a
 * whole line, a progress bar's \r redrawing its line as a terminal does; opened by a job's id in the
 * active jobs (showLog) and closed by Close or the login (closeLog), which stops the follow.
 */
/* global setTimeout, clearTimeout, AbortController */
/* global $ -- format.js */
/* global followJob -- log-follow.js */
/* exported closeLog, showLog, openedLog -- used by app.js */
'use strict';

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

let following = null;
/** The job whose output is open (the last opened): Close gives the focus back to its id. */
let openedLog = null;

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
  // The keyboard's focus, and a screen reader, go to what opened below the tables (found in review:
  // they stayed on the job's id, and nothing said the output had opened).
  openedLog = id;
  $('log-heading').focus();
  clearLog();
  f.status('reading...');
  try {
    await followJob(f);
  } catch (error) {
    if (!stop.signal.aborted) f.status(`stopped following: ${error.message}`);
  }
}
