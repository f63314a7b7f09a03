/*
 * The dashboard's failed jobs: the last few to fail or be lost, why (their exit and reason, as
 * `boa jobs list` says it) and where their output is, so a failure is more than a count in the jobs by
 * state (found in a trial: a job failing after 3 restarts left only "failed 1" on the page).
 */
/* global setHtml, timeHtml, table, escapeHtml -- format.js */
/* exported FAILED_SHOWN, renderFailedJobs -- used by app.js */
'use strict';

/** The failed or lost jobs shown, the latest to end; the CLI lists them all. */
const FAILED_SHOWN = 5;

/** The command that prints the failed rank's output, as `boa jobs wait` and `show` name it. */
function outputCommand(job) {
  const rank = job.failedRank ?? 0;
  return `boa jobs logs ${job.id}${rank === 0 ? '' : ` --rank ${rank}`}`;
}

function failureText(job) {
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}`;
  return [code, job.failureReason].filter(Boolean).join(': ') || job.state;
}

/**
 * `jobs` as GET /v1/jobs?state=failed,lost&order=ended gives them (newest ended first), `total` the
 * count of both (undefined: not known). The id of a job boa
 * ran opens its output below (rank 0's, as the log panel shows) only when rank 0 is the one that
 * failed: another rank's failure is in that rank's log, which the command names.
 */
function renderFailedJobs(jobs, total) {
  if (!jobs.length) {
    setHtml('failed-jobs', '<p>No job has failed.</p>');
    return;
  }
  const rows = jobs.map((j) => [
    j.workload && (j.failedRank ?? 0) === 0
      ? `<button type="button" class="job-log" data-job="${j.id}" title="show its output">${j.id}</button>`
      : j.id,
    escapeHtml(j.name ?? ''),
    escapeHtml(j.class),
    escapeHtml(j.state),
    j.finishedAt ? timeHtml(j.finishedAt) : '-',
    escapeHtml(failureText(j)),
    j.workload ? `<code>${escapeHtml(outputCommand(j))}</code>` : 'self-launched: its own logs',
  ]);
  // Without the total (GET /v1/status failed): a full list may have more behind it.
  const more =
    total === undefined
      ? jobs.length >= FAILED_SHOWN
        ? `the ${jobs.length} that ended last (how many in all is not known now); `
        : ''
      : total > jobs.length
        ? `the ${jobs.length} that ended last of ${total}; `
        : '';
  setHtml(
    'failed-jobs',
    `${table(['id', 'name', 'class', 'state', 'ended', 'why', 'its output'], rows)}` +
      `<p class="shown">${more}boa does not run a failed job again: fix what its output shows and submit it ` +
      `anew (all: <code>boa jobs list --state failed,lost</code>).</p>`,
  );
}
