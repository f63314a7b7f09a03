/*
 * The dashboard's first script. The page loads its scripts in the order of scripts.ts, as classic
 * scripts sharing one global scope: each uses what the ones before it define. This one holds the small
 * helpers all the others use: an element of the page by id (`$`), and values as the page shows them (a
 * number to 2 decimals, a budget as set, a time in UTC as the CLI prints it, a duration, an HTML table,
 * text escaped for HTML).
 */
/* global document */
/* exported $, setHtml, drawnElsewhere, fmt, budgetText, utcTime, timeHtml, minutes, table, escapeHtml */
/* -- used by the scripts after it */
'use strict';

const $ = (id) => document.getElementById(id);

/** The HTML each part of the page was last drawn with, by the element's id. */
const drawnHtml = new Map();

/**
 * Draws a part of the page with `html`, only when it changed; redrawn, a job's button that had the
 * keyboard's focus has it again. The 10 s refresh redrew every table as it was: a text selected to copy
 * (a job's name, the command to its output) was dropped, and the focus went back to the page's top
 * (found in review).
 */
function setHtml(id, html) {
  if (drawnHtml.get(id) === html) return;
  const element = $(id);
  const focused = document.activeElement;
  const job = focused && element.contains?.(focused) ? focused.dataset?.job : undefined;
  element.innerHTML = html;
  drawnHtml.set(id, html);
  if (job !== undefined) element.querySelector(`button.job-log[data-job="${job}"]`)?.focus();
}

/** A part of the page drawn by other means (a chart): the next setHtml draws whatever it is given. */
function drawnElsewhere(id) {
  drawnHtml.delete(id);
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

/**
 * A time in a table, kept on one line by the page's style: squeezed by a long job name, the active
 * jobs' times broke at their hyphen, 2026-12- above 06T22:34:25Z (found in review).
 */
function timeHtml(at) {
  const text = utcTime(at);
  return `<time datetime="${text}">${text}</time>`;
}

function minutes(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  return seconds >= 3600 ? `${(seconds / 3600).toFixed(1)} h` : `${(seconds / 60).toFixed(1)} min`;
}

/** An HTML table of `head` and `rows` (HTML each), with a caption if given (text, escaped). */
function table(head, rows, caption) {
  const th = head.map((h) => `<th>${h}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  const top = caption === undefined ? '' : `<caption>${escapeHtml(caption)}</caption>`;
  return `<table>${top}<thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
