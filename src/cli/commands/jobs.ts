import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import { type Connection, isLocalUrl, localDataDir } from '../connection.ts';
import { contextOf, output } from '../context.ts';
import { dollars, fixed, keyValues, table, when } from '../format.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { resolveJobRef } from '../job-refs.ts';
import { parseNumber } from '../parse.ts';
import { addCancelCommand } from './jobs-cancel.ts';
import { addSubmitCommand } from './jobs-submit.ts';
import { addLogsCommand } from './jobs-logs.ts';
import { addWaitCommand, FINAL_STATES, failedOutputCommand, gpuHoursCell, inLine } from './jobs-wait.ts';
import { gpusCell, heldByNote, stoppingNote } from './jobs-stopping.ts';

type JobView = ReturnType<typeof jobView>;

export const JOB_STATES = ['waiting', 'running', 'done', 'cancelled', 'failed', 'lost'] as const;

export function addJobsCommands(program: Command): void {
  const jobs = program
    .command('jobs')
    .description('training jobs: list, show, logs, submit (register), wait, cancel');

  jobs
    .command('list')
    .description('list the newest jobs (--limit), oldest first')
    .option(
      '--state <states>',
      `only jobs in this state, or any of several: waiting,running (${JOB_STATES.join(', ')}); may be repeated`,
      // Repeated (--state waiting --state running) means any of them, as the comma list does.
      (value: string, previous?: string) => (previous === undefined ? value : `${previous},${value}`),
    )
    .option('--class <class>', 'only jobs of this class')
    .option('--name <name>', 'only jobs of exactly this name')
    .option('--limit <n>', 'the newest this many jobs (the service allows 1 to 10000; default 1000)')
    .option('--before <id>', 'only jobs with a lower id: the page before one that began with this job')
    .option('-q, --quiet', 'only the ids, one a line (for xargs: boa jobs list -q --state waiting)')
    .option(
      '--ended',
      'the jobs that ended last, newest first (what finished lately; of the --state given, else of all ended)',
    )
    .option(
      '--queue',
      'the jobs queued for the budget, in the order they start as it allows (the first --limit)',
    )
    .action(async (options: ListOptions, command: Command) => {
      const context = contextOf(command);
      if (options.quiet && context.json)
        throw usageError('--quiet prints only the ids: give it without --json, or use --json alone');
      if (options.ended && options.before !== undefined)
        throw usageError(
          '--ended lists the newest to end and has no pages: give --limit N (up to 10000), not --before',
        );
      if (options.queue) refuseWithQueue(options);
      const query = new URLSearchParams();
      // Ended without --state: the ended states alone (the API lists the jobs not ended after them).
      const states = options.state ?? (options.ended ? [...FINAL_STATES].join(',') : undefined);
      if (states !== undefined) query.set('state', parseStates(states).join(','));
      if (options.ended) query.set('order', 'ended');
      if (options.queue) query.set('order', 'queue');
      if (options.class !== undefined) query.set('class', options.class);
      if (options.name !== undefined) query.set('name', options.name);
      const limit = options.limit === undefined ? DEFAULT_LIMIT : parseNumber(options.limit, '--limit');
      if (options.limit !== undefined) query.set('limit', String(limit));
      if (options.before !== undefined) query.set('before', String(parseNumber(options.before, '--before')));
      const path = query.size > 0 ? `/v1/jobs?${query}` : '/v1/jobs';
      const { data, text } = await context.client.json<{ jobs: JobView[] }>(
        'GET',
        path,
        undefined,
        undefined,
        ['jobs'],
      );
      // Only ids: a name may hold spaces, so awk on the table's columns could take the wrong one.
      if (options.quiet) context.print(data.jobs.map((job) => `${job.id}\n`).join(''));
      else output(context, text, () => renderJobs(data.jobs));
      // On stderr, so the table stays whole for awk: a full page may have older jobs before it, which
      // one more row says (a page ending at the first job named an empty one: a newcomer trial).
      const oldest = data.jobs[0]?.id;
      // With --json too: stdout stays one JSON document, and a script is told its page is not all.
      if (options.ended && data.jobs.length === limit) {
        process.stderr.write(
          `${limit === 1 ? 'the last job to end is' : `the last ${limit} jobs to end are`} shown; more: --limit N (up to 10000)\n`,
        );
      } else if (options.queue && data.jobs.length === limit) {
        process.stderr.write(`the first ${limit} in the queue are shown; more: --limit N (up to 10000)\n`);
      } else if (!options.ended && !options.queue && data.jobs.length === limit && oldest !== undefined) {
        const older = new URLSearchParams(query);
        older.set('before', String(oldest));
        older.set('limit', '1');
        const { data: before } = await context.client.json<{ jobs: JobView[] }>('GET', `/v1/jobs?${older}`);
        if (before.jobs.length > 0)
          process.stderr.write(
            `${limit === 1 ? 'the newest job is' : `the newest ${limit} jobs are`} shown; older ones: --before ${oldest} (or --limit N, up to 10000)\n`,
          );
      }
    });

  jobs
    .command('show')
    .description('one job: state, width and generation, epoch, restarts, its command and (local) its logs')
    .argument('<job>', 'job id, or the name of one job (see boa jobs list)')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const context = contextOf(command);
      const jobId = await resolveJobRef(context.client, ref);
      const { data, text } = await context.client.json<JobView>(
        'GET',
        `/v1/jobs/${jobId}`,
        undefined,
        undefined,
        ['id', 'state'],
      );
      output(context, text, () => renderJob(data, logsDir(context.client.connection, data)));
    });

  addLogsCommand(jobs);
  addSubmitCommand(jobs);
  addWaitCommand(jobs);

  addCancelCommand(jobs);
}

interface ListOptions {
  state?: string;
  class?: string;
  name?: string;
  limit?: string;
  before?: string;
  ended?: boolean;
  queue?: boolean;
  quiet?: boolean;
}

/** --queue is one list of its own: the queue's order, of waiting jobs, no pages. */
function refuseWithQueue(options: ListOptions): void {
  if (options.ended) throw usageError('--queue and --ended are two orders: give one of them');
  if (options.before !== undefined)
    throw usageError('--queue has no pages: give --limit N (up to 10000), not --before');
  if (options.state !== undefined)
    throw usageError('--queue lists waiting jobs queued for the budget: give it without --state');
}

/** `--state running` or `--state waiting,running`: each a state, so a typo is named before any request. */
function parseStates(value: string): string[] {
  const states = value.split(',').map((s) => s.trim());
  const wrong = states.find((s) => !(JOB_STATES as readonly string[]).includes(s));
  if (wrong !== undefined) {
    throw new CliError(
      `--state takes ${JOB_STATES.join(', ')}, or several separated by commas (waiting,running); got "${wrong}"`,
      EXIT.badInput,
    );
  }
  return states;
}

/** The service's page size when no --limit is given. */
const DEFAULT_LIMIT = 1000;

const WAITS_FOR = {
  plan: 'waits for a plan (is a budget set? boa budget set N)',
  budget: 'queued for the budget',
  tick: 'waits for the next tick',
  // As the dashboard says it: "waits for nodes" alone left open whether any were coming (a trial).
  nodes: 'waits for nodes to boot',
  gpus: 'waits for GPUs the running jobs hold',
  stopping: 'waits for GPUs stopping replicas still hold',
};

/** The list's last column: why a waiting job waits, a running job's restarts, why a job ended badly. */
export function outcome(job: JobView, now = Date.now()): string | null {
  // First: GPUs a job still holds while its replicas stop, whatever its state says.
  const stopping = stoppingNote(job, now);
  const rest = outcomeOfState(job, now);
  return stopping && rest ? `${stopping}; ${rest}` : (stopping ?? rest);
}

function outcomeOfState(job: JobView, now: number): string | null {
  const held = heldByNote(job, now);
  if (held) return `waits for ${held}`;
  if (job.waitingFor) return `${WAITS_FOR[job.waitingFor]}${inLine(job)}`;
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}: `;
  if (job.state !== 'failed' && job.state !== 'lost') {
    const notes: string[] = [];
    // Running narrower than its plan: the budget's ceiling narrowed it (the service says so), or its
    // nodes still boot or placement could not give it more.
    const planned = job.state === 'running' ? job.widths?.[job.statEpoch] : undefined;
    const lent = lentOf(job);
    const booked = job.width - lent;
    if (planned !== undefined && movedEpochAtItsPlan(job, booked, planned)) {
      // In a new epoch since the last tick, on the epoch before's width, which the next tick changes
      // (read as "nodes booting or placement" with every node ready: a newcomer). Not a promise: the
      // budget and the nodes have their say at that tick. Epochs counted from 1.
      const on =
        lent > 0
          ? `on ${job.width} GPUs: epoch ${job.statEpoch}'s plan's ${booked} and ${lent} lent by the idle fill (idle on its nodes, not booked)`
          : `on ${booked} GPUs, epoch ${job.statEpoch}'s plan`;
      notes.push(
        `${on}; its plan gives ${planned} for epoch ${job.statEpoch + 1} from the next tick, as the budget and nodes allow`,
      );
    } else {
      if (planned !== undefined && booked < planned) {
        const why =
          job.narrowedBy === 'budget'
            ? "the budget's ceiling: boa budget get"
            : 'nodes booting or placement: boa status';
        notes.push(`on ${booked} of its plan's ${planned} GPUs (${why})`);
      }
      if (lent > 0) notes.push(lentNote(job));
    }
    // A job crash-looping towards `failed` says why now, not only once it has failed for good.
    const last = job.failureReason ? `, the last after ${code}${job.failureReason}` : '';
    if (job.restarts > 0) notes.push(`${job.restarts} restart${job.restarts === 1 ? '' : 's'}${last}`);
    // Done is right (rank 0 exited 0, or complete was called), but its epoch says only where it began.
    if (job.state === 'done' && job.reportedProgress === false)
      notes.push('ended without reporting progress');
    // Its epoch is the last report's: one done before the plan's last epoch stopped early, or its last
    // reports never reached boa (it ended while the service was down); either way not a job cut short.
    const epochs = job.widths?.length ?? 0;
    if (job.state === 'done' && job.reportedProgress === true && job.statEpoch + 1 < epochs)
      notes.push(`last reported epoch ${job.statEpoch + 1} of ${epochs}`);
    return notes.length > 0 ? notes.join('; ') : null;
  }
  return `${code}${job.failureReason ?? job.state}`;
}

/**
 * A job that moved into a new statistical epoch since the last tick and still runs the epoch before's
 * planned width, which the new epoch's differs from. Not when the budget's ceiling narrowed it: that
 * reason stands at the next tick too (found in review: a job held at 4 of 16 by the budget was said
 * to get 16 from the next tick at every epoch change).
 */
function movedEpochAtItsPlan(job: JobView, booked: number, planned: number): boolean {
  const before = job.statEpoch > 0 ? job.widths?.[job.statEpoch - 1] : undefined;
  return (
    job.epochAfterLastTick === true && job.narrowedBy !== 'budget' && booked === before && booked !== planned
  );
}

/** GPUs the idle fill lent the job beyond its width (0 from a service too old to say). */
function lentOf(job: JobView): number {
  return job.state === 'running' ? (job.lentGpus ?? 0) : 0;
}

/** Why a job runs wider than its plan: the idle fill lent its nodes' idle GPUs, not booked by the budget. */
function lentNote(job: JobView): string {
  const lent = lentOf(job);
  return `on ${job.width} GPUs: its plan's ${job.width - lent} and ${lent} lent by the idle fill (idle on its nodes, not booked)`;
}

/**
 * The log folder of the job's latest generation that ran here, when the service is local: a failed or
 * cancelled job's generation went up when it stopped, and its last logs are in the one before.
 */
function logsDir(connection: Connection, job: JobView): string | undefined {
  if (!isLocalUrl(new URL(connection.url))) return undefined;
  // The data dir is this service's only when its token file was the one proved (or the caller named
  // it): with --token or BOA_TOKEN, ./data may be another service's, whose job of this id is another.
  if (connection.tokenSource !== 'file' && !process.env.BOA_DATA_DIR) return undefined;
  const dir = join(localDataDir(process.env, process.cwd()), 'jobs', String(job.id));
  if (!existsSync(dir)) return undefined;
  const generations = readdirSync(dir)
    .filter((name) => /^\d+$/.test(name) && Number(name) <= job.generation)
    .map(Number);
  return generations.length > 0 ? join(dir, String(Math.max(...generations))) : undefined;
}

function renderJob(job: JobView, logs: string | undefined): string {
  const epochs = job.widths?.length;
  const active = job.state === 'waiting' || job.state === 'running';
  const work =
    job.workDoneSeconds > 0 ? ` (${fixed(job.workDoneSeconds, 1)} 1-GPU s of work done in it)` : '';
  const command = job.workload
    ? job.workload.command
        .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word)))
        .join(' ')
    : 'none: self-launched (it polls its allocation)';
  return keyValues([
    ['job', `${job.id}${job.name ? ` ${job.name}` : ''} (${job.class})`],
    ['state', [job.state, outcome(job)].filter(Boolean).join(': ')],
    // An ended job's generation went up as it stopped (its replicas read that as "stop"): none ran it.
    ['GPUs', `${gpusCell(job)}${active ? `, generation ${job.generation}` : ''}`],
    ['GPU-hours', gpuHoursLine(job)],
    // Counted from 1, as people count: the API's statEpoch is an index. Not the trainer's own epochs.
    ['statistical epoch', `${job.statEpoch + 1}${epochs ? ` of ${epochs}` : ''}${work}`],
    ['plan widths', job.widths ? `${job.widths.join(' ')} by epoch (plan #${job.planId})` : null],
    ['submitted', when(job.submittedAt)],
    ['first started', when(job.startedAt)],
    ['finished', when(job.finishedAt)],
    // When its client last said how far it got (none: never; '-': a service too old to say).
    ['last report', job.lastReportAt === null ? 'none' : when(job.lastReportAt)],
    [
      'restarts',
      `${job.restarts}${job.restartNotBefore && active ? `, the next not before ${when(job.restartNotBefore)}` : ''}`,
    ],
    ['command', command],
    // Only when given: a local service ignores it, and the submit said so.
    ...(job.workload?.image === undefined ? [] : [['image', job.workload.image] as [string, string]]),
    ['workdir', job.workload?.workingDir ?? null],
    ...(logs ? [['logs', `${logs}/<rank>.log`] as [string, string]] : []),
    // A failure's own words (a traceback) are in the job's output.
    ...(job.state === 'failed' && job.workload
      ? [
          ['output', `${failedOutputCommand(job)} (${whichRank(job)}; --rank N for the others)`] as [
            string,
            string,
          ],
        ]
      : []),
  ]);
}

/**
 * What the job cost the budget so far: its share of the ledger's allocated GPU-hours. Left out for a
 * service too old to say (undefined).
 */
function gpuHoursLine(job: JobView): string | null {
  if (job.gpuHours === undefined) return null;
  if (job.gpuHours === null) return 'not kept (submitted before boa kept it)';
  // In dollars too where the service knows its nodes' price (none: a service too old, or no price).
  const cost = typeof job.dollars === 'number' ? `, about ${dollars(job.dollars)}` : '';
  return `${fixed(job.gpuHours, 2)} booked to the budget (lent GPUs not counted${cost})`;
}

/** The rank `show`'s output line points at, and why that one. */
function whichRank(job: JobView): string {
  // undefined: a service from before failedRank.
  return job.failedRank === undefined || job.failedRank === null
    ? 'rank 0'
    : `rank ${job.failedRank}, the one that failed`;
}

function renderJobs(jobs: JobView[]): string {
  if (jobs.length === 0) return 'no jobs\n';
  const rows = jobs.map((j) => [
    j.id,
    j.name,
    j.class,
    j.state,
    j.statEpoch + 1,
    gpusCell(j),
    gpuHoursCell(j),
    when(j.submittedAt),
    when(j.startedAt),
    when(j.finishedAt),
    outcome(j),
  ]);
  return table(
    ['id', 'name', 'class', 'state', 'epoch', 'GPUs', 'GPU-h', 'submitted', 'started', 'finished', 'note'],
    rows,
  );
}
