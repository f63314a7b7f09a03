/*
 * A followed job's state in the words `boa jobs logs -f` says it with: running, waiting (for what),
 * how it ended, a restart's backoff, a generation starting. Text only: log-follow.js puts it on the log's
 * status line.
 */
/* global utcTime -- format.js */
/* global inLine, stoppingNote -- tables.js */
/* exported describeJob, startingLine -- used by log-follow.js */
'use strict';

/** Why a followed job waits, in the words `boa jobs logs -f` says it with (those of `boa jobs list`). */
const WAITING_WORDS = {
  plan: 'waiting for a plan',
  budget: 'queued for the budget',
  tick: 'waiting for the next tick',
  nodes: 'waiting for nodes to boot',
  gpus: 'waiting for GPUs the running jobs hold',
  stopping: 'waiting for GPUs stopping replicas still hold',
};

const jobWho = (job) => `job ${job.id}${job.name ? ` (${job.name})` : ''}`;

/** "job 3 (first): failed (exit 1: rank 0 exited 1)": a followed job's state as the CLI says it. */
function describeJob(job) {
  const who = jobWho(job);
  if (job.state === 'running') {
    // Lent GPUs said apart, as `boa jobs show` does: the plan did not book them (0 from an older service).
    const lent = job.lentGpus > 0 ? ` (${job.lentGpus} lent by the idle fill, not booked)` : '';
    return `${who}: running on ${job.width} GPU${job.width === 1 ? '' : 's'}${lent}`;
  }
  if (job.state === 'waiting')
    return `${who}: ${job.waitingFor ? (WAITING_WORDS[job.waitingFor] ?? `waiting for ${job.waitingFor}`) : 'waiting'}${inLine(job)}`;
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}`;
  const why = job.state === 'failed' ? [code, job.failureReason].filter(Boolean).join(': ') : '';
  // Ended with replicas still stopping (other ranks within their grace): said as `boa jobs logs -f`
  // ends (its describeJob); the panel's end line read as if all had stopped (found in review).
  const stopping = stoppingNote(job);
  return `${who}: ${job.state}${why ? ` (${why})` : ''}${stopping ? `, ${stopping}` : ''}`;
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
