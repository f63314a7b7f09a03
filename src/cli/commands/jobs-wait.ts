import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import { type CliContext, contextOf, output } from '../context.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { fixed, printable, table, when } from '../format.ts';
import { resolveJobRef } from '../job-refs.ts';
import { isDecimal } from '../parse.ts';
import { isTransient, UNANSWERED_MS } from '../transient.ts';
import { heldByNote, stoppedFor, stoppingNote } from './jobs-stopping.ts';

type JobView = ReturnType<typeof jobView>;

export const FINAL_STATES: ReadonlySet<string> = new Set(['done', 'cancelled', 'failed', 'lost']);
/** Why it waits, in a wait's progress lines: as `boa jobs list` says it. */
const WAITING_WORDS: Record<string, string> = {
  plan: 'waiting for a plan',
  budget: 'queued for the budget',
  tick: 'waiting for the next tick',
  nodes: 'waiting for nodes to boot',
  gpus: 'waiting for GPUs the running jobs hold',
  stopping: 'waiting for GPUs stopping replicas still hold',
};

export interface WaitOptions {
  timeout?: string;
  interval: string;
}

/**
 * `boa jobs wait <job...>`: blocks until the jobs end, as `kubectl wait` and `sbatch --wait` do, so a
 * pipeline can submit, wait, and branch on the exit code (0: all done; 5: one ended otherwise; 6: the
 * timeout passed first). State changes go to stderr as they happen; the jobs' final rows to stdout.
 */
export function addWaitCommand(jobs: Command): void {
  jobs
    .command('wait')
    .description(
      'wait until jobs end: exit 0 when all are done, 5 when one failed, was cancelled or lost, 6 on --timeout',
    )
    .argument('<job...>', 'job ids, or names of one job each (see boa jobs list)')
    .option('--timeout <duration>', 'give up after this long: 90 (seconds), 90s, 30m, 2h (default: never)')
    .option('--interval <seconds>', 'how often to ask the service', '5')
    .action(async (refs: string[], options: WaitOptions, command: Command) => {
      const context = contextOf(command);
      const ids: number[] = [];
      for (const ref of refs) {
        const id = await resolveJobRef(context.client, ref);
        if (!ids.includes(id)) ids.push(id);
      }
      await waitForJobs(context, ids, options);
    });
}

/**
 * Ended as `jobs wait` means it: in a final state and its replicas gone, as `kubectl delete --wait` waits
 * for the pods to be gone: a cancelled job whose replica runs on through its grace still holds its GPUs
 * (and its files), and a script that goes on at once would race it.
 */
function ended(view: JobView | undefined): boolean {
  return view !== undefined && FINAL_STATES.has(view.state) && stoppedFor(view);
}

/** Polls the jobs until each has ended (or the timeout), then reports them and exits. */
export async function waitForJobs(
  context: CliContext,
  ids: readonly number[],
  options: WaitOptions,
): Promise<void> {
  const latest = new Map<number, { view: JobView; text: string }>();
  // Waiting is only watching: said on Ctrl-C, as logs -f says it, before anyone submits a job again
  // thinking it cancelled (found by a newcomer's review: the wait ended without a word).
  const onInterrupt = () => {
    const open = ids.filter((id) => !ended(latest.get(id)?.view));
    const list = open.join(' ');
    process.stderr.write(
      open.length === 0
        ? '\nboa: stopped waiting\n'
        : `\nboa: stopped waiting; ${open.length === 1 ? `job ${list} runs` : `jobs ${list} run`} on ` +
            `(boa jobs wait ${list} waits again, boa jobs cancel ${list} stops ${open.length === 1 ? 'it' : 'them'})\n`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  try {
    await pollUntilEnded(context, ids, options, latest);
  } finally {
    // `submit --wait -f` follows the logs next, with its own word on Ctrl-C.
    process.off('SIGINT', onInterrupt);
  }
}

/** The polling itself: each state change said on stderr; the final rows, or the error, at the end. */
async function pollUntilEnded(
  context: CliContext,
  ids: readonly number[],
  options: WaitOptions,
  latest: Map<number, { view: JobView; text: string }>,
): Promise<void> {
  const timeoutMs = options.timeout === undefined ? Number.POSITIVE_INFINITY : parseDuration(options.timeout);
  const intervalMs = parseInterval(options.interval);
  const deadline = Date.now() + timeoutMs;
  const seen = new Map<number, string>();
  let failingSince: number | undefined;
  let saidRetry: string | undefined;
  for (;;) {
    try {
      const open = ids.filter((id) => !ended(latest.get(id)?.view));
      const listed = await activeJobs(context, open);
      for (const id of open) {
        const found = listed.get(id);
        const { data, text } = found
          ? { data: found, text: JSON.stringify(found) }
          : await context.client.json<JobView>('GET', `/v1/jobs/${id}`, undefined, undefined, [
              'id',
              'state',
            ]);
        latest.set(id, { view: data, text });
        const line = describeJob(data);
        if (seen.get(id) !== line) {
          seen.set(id, line);
          process.stderr.write(`${printable(line)}\n`);
        }
      }
      failingSince = undefined;
      saidRetry = undefined;
    } catch (error) {
      // boa restarting (no answer, a cut one, 503 while it starts) is waited out, as logs -f does: the
      // jobs run on, and exit 1 or 3 here read as the wait's answer to a script.
      if (!isTransient(error) || Date.now() >= deadline) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > UNANSWERED_MS) throw error;
      // Once an outage and message, not every poll (a line every 2 s for the 5 minutes: a review).
      const retry = `boa: ${printable(error.message)}; trying again for up to ${UNANSWERED_MS / 60_000} minutes\n`;
      if (retry !== saidRetry) process.stderr.write(retry);
      saidRetry = retry;
      await new Promise((wake) => setTimeout(wake, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
      continue;
    }
    const views = ids.map((id) => latest.get(id)!.view);
    const pending = views.filter((v) => !ended(v));
    if (pending.length === 0 || Date.now() >= deadline) {
      output(context, `[${ids.map((id) => latest.get(id)!.text).join(',')}]`, () => render(views));
      if (pending.length > 0) {
        throw new CliError(
          `${pending.length} of ${ids.length} not finished after ${timeoutText(options.timeout ?? '')}: ${pending.map((v) => `job ${v.id}${v.name ? ` (${v.name})` : ''} ${v.state}${v.stopping ? ', its replicas still stopping' : ''}`).join(', ')}`,
          EXIT.timedOut,
        );
      }
      const unsuccessful = views.filter((v) => v.state !== 'done');
      if (unsuccessful.length > 0) {
        throw new CliError(
          `${unsuccessful.length} of ${ids.length} did not finish: ${unsuccessful.map((v) => `${v.id} ${v.state}`).join(', ')}`,
          EXIT.jobUnsuccessful,
        );
      }
      return;
    }
    await new Promise((wake) => setTimeout(wake, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}

/**
 * Many jobs are read in one request a round (the active ones), not one each: `jobs wait` on a few
 * hundred ids every 5 s would otherwise be a request each. Jobs it does not list (ended, or older
 * than the newest 10000) are read one by one.
 */
async function activeJobs(context: CliContext, open: readonly number[]): Promise<Map<number, JobView>> {
  if (open.length <= 10) return new Map();
  const { data } = await context.client.json<{ jobs: JobView[] }>(
    'GET',
    '/v1/jobs?state=waiting,running&limit=10000',
    undefined,
    undefined,
    ['jobs'],
  );
  return new Map(data.jobs.map((job) => [job.id, job]));
}

/**
 * What prints a failed job's own words: the log of the rank that failed, which the service names
 * (failedRank; found in a trial: a failure on rank 1 pointed at rank 0's healthy log), rank 0's from a
 * service too old to say.
 */
export function failedOutputCommand(job: Pick<JobView, 'id' | 'failedRank'>): string {
  const rank = job.failedRank ?? 0;
  return `boa jobs logs ${job.id}${rank === 0 ? '' : ` --rank ${rank}`}`;
}

/** A job queued for the budget: its place in line (", #3 in line"), as the lists say it; else ''. */
export function inLine(job: Pick<JobView, 'waitingFor' | 'queuePlace'>): string {
  return job.waitingFor === 'budget' && job.queuePlace ? `, #${job.queuePlace} in line` : '';
}

/** Where a failed job's line says how to read its output (the line's end). */
const OUTPUT_HINT = '; its output: ';

/** "job 3 (first): running on 4 GPUs" — what changed, as a person watching would say it. */
export function describeJob(job: JobView): string {
  const state = describeState(job);
  // Said of a job that has ended, whose replicas `jobs wait` waits out. A running job's old generation
  // stopping is its restart's or rescale's own business: said there too, logs -f repeated the running
  // line at every restart (found by CI). Before a failed job's hint to its output, which ends the line.
  const stopping = FINAL_STATES.has(job.state) ? stoppingNote(job, 'at') : null;
  if (!stopping) return state;
  const hint = state.indexOf(OUTPUT_HINT);
  return hint < 0 ? `${state}, ${stopping}` : `${state.slice(0, hint)}, ${stopping}${state.slice(hint)}`;
}

function describeState(job: JobView): string {
  const who = `job ${job.id}${job.name ? ` (${job.name})` : ''}`;
  if (job.state === 'running') {
    // Lent GPUs said apart, as the dashboard's followed job and `boa jobs show` say them.
    const lent = (job.lentGpus ?? 0) > 0 ? ` (${job.lentGpus} lent by the idle fill, not booked)` : '';
    return `${who}: running on ${job.width} GPU${job.width === 1 ? '' : 's'}${lent}`;
  }
  const held = job.state === 'waiting' ? heldByNote(job, 'at') : null;
  if (held) return `${who}: waiting for ${held}`;
  if (job.state === 'waiting')
    return `${who}: ${job.waitingFor ? (WAITING_WORDS[job.waitingFor] ?? `waiting for ${job.waitingFor}`) : 'waiting'}${inLine(job)}`;
  const why =
    job.state === 'failed' && job.exitCode !== null
      ? ` (exit ${job.exitCode}${job.failureReason ? `: ${job.failureReason}` : ''})`
      : '';
  // Why, in its own words (a traceback), is in its output, which nothing else here shows.
  const output = job.state === 'failed' && job.workload ? `${OUTPUT_HINT}${failedOutputCommand(job)}` : '';
  return `${who}: ${job.state}${why}${output}`;
}

/** GPU-hours for the list: '-' when not kept or from a service too old to say. */
export function gpuHoursCell(job: JobView): string {
  return job.gpuHours === undefined || job.gpuHours === null ? '-' : fixed(job.gpuHours, 2);
}

function render(views: readonly JobView[]): string {
  return table(
    ['id', 'name', 'class', 'state', 'finished', 'GPU-h'],
    // What each cost the budget ('-': not kept, or a service too old to say).
    views.map((v) => [v.id, v.name, v.class, v.state, when(v.finishedAt), gpuHoursCell(v)]),
  );
}

const UNIT_MS: Record<string, number> = { '': 1000, s: 1000, m: 60_000, h: 3_600_000 };

/** 90, 90s, 30m, 2h (a positive number of seconds, minutes or hours). */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([smh]?)$/.exec(text.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]!]! : Number.NaN;
  if (!(ms > 0))
    throw usageError(`--timeout must be a positive duration such as 90, 90s, 30m or 2h, got "${text}"`);
  return ms;
}

/** The timeout as given, with its unit: a bare number is seconds. */
function timeoutText(text: string): string {
  return /^\d+(\.\d+)?$/.test(text.trim()) ? `${text.trim()} s` : text.trim();
}

function parseInterval(text: string): number {
  const seconds = isDecimal(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 0.1 && seconds <= 3600)) {
    throw usageError(`--interval must be a number of seconds from 0.1 to 3600, got "${text}"`);
  }
  return seconds * 1000;
}
