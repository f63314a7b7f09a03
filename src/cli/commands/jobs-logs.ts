import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import type { BoaClient } from '../client.ts';
import { contextOf } from '../context.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { printable, printableJson, when } from '../format.ts';
import { resolveJobRef } from '../job-refs.ts';
import { parseNumber } from '../parse.ts';
import { describeJob, FINAL_STATES } from './jobs-wait.ts';
import { isTransient, UNANSWERED_MS } from '../transient.ts';
import { earlierRunsLine, nothingWrittenLine } from './logs-hints.ts';

type JobView = ReturnType<typeof jobView>;

/** The most lines a request gives: a newer generation's log is shown from its start, up to this. */
export const WHOLE_LOG = 10_000;
/** How often a followed job is asked after for a newer generation or its end. */
const FOLLOW_POLL_MS = 2000;

interface LogsOptions {
  rank: string;
  generation?: string;
  tail: string;
  follow?: boolean;
}

export function addLogsCommand(jobs: Command): void {
  jobs
    .command('logs')
    .description("the last lines a job's replica wrote (jobs boa runs; on Kubernetes while the pod exists)")
    .argument('<job>', 'job id, or the name of one job (see boa jobs list)')
    .option('--rank <n>', "the replica's rank", '0')
    .option('--generation <g>', 'default: the newest generation whose log is kept')
    .option('--tail <n>', 'the last this many lines (1 to 10000)', '100')
    .option(
      '-f, --follow',
      'then print what it writes, through its restarts and rescales, until the job ends (exit 0 when done, 5 when it failed, was cancelled or lost)',
    )
    .action(async (ref: string, options: LogsOptions, command: Command) => {
      const context = contextOf(command);
      const rank = parseNumber(options.rank, '--rank');
      const tail = parseNumber(options.tail, '--tail');
      const generation =
        options.generation === undefined ? undefined : parseNumber(options.generation, '--generation');
      if (options.follow && context.json)
        throw usageError("--follow prints the job's output as it comes: give it without --json");
      const jobId = await resolveJobRef(context.client, ref);
      if (options.follow) return followLogs(context.client, jobId, { rank, tail, generation });
      const query = logQuery({ rank, tail, generation });
      const { text, headers } = await context.client.textAnswer(
        'GET',
        `/v1/jobs/${jobId}/logs?${query}`,
        'boa-generation',
      );
      const shown = Number(headers.get('boa-generation'));
      // --json was ignored (the bare log printed); a script gets which run the lines are from with them.
      if (context.json) {
        const document = { job: jobId, rank, generation: shown, text };
        context.print(`${printableJson(JSON.stringify(document))}\n`);
      } else process.stdout.write(text);
      // Said on stderr, stdout stays the log alone: an empty answer is not a failure to read, and the
      // newest generation alone hid the runs before a rescale or restart (found in a newcomer trial).
      if (text === '') {
        const line = await nothingWrittenLine(
          context.client,
          jobId,
          rank,
          shown,
          generation !== undefined,
          await jobEnded(context.client, jobId),
        );
        process.stderr.write(`boa: ${line}\n`);
      } else if (generation === undefined && shown > 1) {
        process.stderr.write(`boa: ${await earlierRunsLine(context.client, jobId, rank, shown)}\n`);
      }
    });
}

interface LogQuery {
  rank: number;
  tail: number;
  generation?: number | undefined;
  follow?: boolean;
  /** Followed on from here (the service's cursor, and bytes past it): a cut stream asked again. */
  from?: { cursor: string; skip: number };
}

/**
 * What a follow starts from: the rank, the lines before now, and (alone) one generation; or, with
 * `fromFirstRun`, every generation from the first's start (a job followed since its submission).
 */
export type FollowQuery = Omit<LogQuery, 'follow' | 'from'> & { fromFirstRun?: boolean };

function logQuery({ rank, tail, generation, follow, from }: LogQuery): URLSearchParams {
  const query = new URLSearchParams({ rank: String(rank), tail: String(tail) });
  if (generation !== undefined) query.set('generation', String(generation));
  if (follow) query.set('follow', 'true');
  if (from) query.set('cursor', from.cursor);
  if (from?.skip) query.set('skip', String(from.skip));
  return query;
}

/**
 * `kubectl logs -f` across a job's life: the replica's log as it is written; when that generation
 * ends (a restart, a rescale), the next one's from its start, each announced on stderr; until the job
 * ends, said on stderr as `jobs wait` says it. A generation named with --generation is followed alone.
 */
export async function followLogs(client: BoaClient, jobId: number, first: FollowQuery): Promise<void> {
  // Following is only watching: say so on Ctrl-C, before anyone cancels a job to stop it twice.
  process.once('SIGINT', () => {
    process.stderr.write(
      `\nboa: stopped following; job ${jobId} runs on (boa jobs logs ${jobId} -f follows it again, boa jobs cancel ${jobId} stops it)\n`,
    );
    process.exit(130);
  });
  const write = (text: string) => void process.stdout.write(text);
  let said = '';
  const say = (line: string) => {
    if (line !== said) process.stderr.write(`${printable(line)}\n`);
    said = line;
  };
  // What is said of a generation (its start, its width, its restart) is said once: while the next one
  // waits out a backoff or has written nothing yet (a pod pulling its image), the loop below comes back
  // to it every poll (found in review: the same three lines every 2 s).
  const saidOf = new Map<number, Set<string>>();
  const sayOnce = (generation: number, line: string) => {
    const lines = saidOf.get(generation) ?? new Set<string>();
    saidOf.set(generation, lines);
    if (lines.has(line)) return;
    lines.add(line);
    say(line);
  };
  /** The generations up to this one are shown, or were not to be (none kept when following began). */
  let after: number | undefined = first.fromFirstRun ? 0 : undefined;
  let shownAny = false;
  // From the first run: a job that ran and restarted before the first request is shown whole.
  let query: LogQuery = first.fromFirstRun
    ? fromStart(first.rank, 1)
    : { rank: first.rank, tail: first.tail, generation: first.generation, follow: true };
  for (;;) {
    const streamed = await streamLog(client, jobId, query, write, say);
    if (streamed) {
      after = streamed.generation;
      shownAny = true;
      if (first.generation !== undefined) return;
    } else if (first.generation !== undefined) {
      throw new CliError(`job ${jobId} has no log kept for generation ${first.generation}`, EXIT.failed);
    } else {
      // Nothing kept yet (it waits, or its process or pod is not up): every generation from its
      // present one on is to be shown, whenever it runs.
      const job = await readJob(client, jobId);
      if (after === undefined) after = job.generation - 1;
      if (job.state === 'running') await refuseMissingRank(client, jobId, first.rank);
      // A restart's backoff: the job runs (its next generation numbered already) and has no log yet.
      const backoff = restartLine(job);
      if (backoff) sayOnce(job.generation, backoff);
      await pause();
    }
    const job = await nextGeneration(client, jobId, after, say, sayOnce);
    const final = FINAL_STATES.has(job.state);
    // Generations that ran and ended while it was asked after (a run shorter than a poll): shown whole.
    for (let g = Math.max(1, after + 1); g <= (final ? job.generation : job.generation - 1); g++) {
      // Announced with its first line: a generation that never ran (or kept no log) says nothing.
      let announced = !shownAny;
      const writeAnnounced = (text: string) => {
        if (!announced) sayOnce(g, `--- job ${jobId}, generation ${g} ---`);
        announced = true;
        write(text);
      };
      const shown = await streamLog(client, jobId, fromStart(first.rank, g), writeAnnounced, say);
      if (!shown) continue;
      after = g;
      shownAny = true;
    }
    if (final) {
      // Its output, which `jobs wait` points to, was just shown, if the rank followed is the one that
      // failed; else the hint names that one (--rank N).
      const shownFailure = (job.failedRank ?? 0) === first.rank;
      const ended = shownFailure ? describeJob(job).replace(/; its output: .*$/, '') : describeJob(job);
      if (job.state !== 'done') throw new CliError(ended, EXIT.jobUnsuccessful);
      say(ended);
      return;
    }
    if (shownAny) sayOnce(job.generation, `--- job ${jobId}, generation ${job.generation} ---`);
    // Begun after the first request: shown from its start.
    query = fromStart(first.rank, job.generation);
  }
}

/** A rank the running job has no replica of would be waited for until the job ends, showing nothing. */
async function refuseMissingRank(client: BoaClient, jobId: number, rank: number): Promise<void> {
  const { data } = await client.json<{ nodes: unknown[] }>(
    'GET',
    `/v1/jobs/${jobId}/allocation`,
    undefined,
    undefined,
    ['nodes'],
  );
  const replicas = data.nodes.length;
  if (replicas === 0 || rank < replicas) return;
  throw new CliError(
    `job ${jobId} runs ${replicas} replica${replicas === 1 ? '' : 's'} now (--rank 0${replicas > 1 ? ` to ${replicas - 1}` : ''}): --rank ${rank} is none of them`,
    EXIT.badInput,
  );
}

const pause = () => new Promise((wake) => setTimeout(wake, FOLLOW_POLL_MS));

/** What a follow ends with once boa has not answered for UNANSWERED_MS: how to follow again. */
function followGivenUp(error: CliError, jobId: number): CliError {
  return new CliError(
    `${error.message} (job ${jobId} may still run: boa jobs logs ${jobId} -f follows it again)`,
    error.exitCode,
    error.body,
  );
}

/** The job, asked again while boa restarts (its log's stream is: streamLog), so the follow goes on. */
async function readJob(client: BoaClient, jobId: number): Promise<JobView> {
  let failingSince: number | undefined;
  for (;;) {
    try {
      return (await client.json<JobView>('GET', `/v1/jobs/${jobId}`, undefined, undefined, ['id', 'state']))
        .data;
    } catch (error) {
      if (!isTransient(error)) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > UNANSWERED_MS) throw followGivenUp(error, jobId);
      await pause();
    }
  }
}

/** A generation's log from its start (the cursor `start`), followed until it ends. */
function fromStart(rank: number, generation: number): LogQuery {
  return { rank, tail: WHOLE_LOG, generation, from: { cursor: 'start', skip: 0 }, follow: true };
}

/**
 * Streams one generation's log; undefined when none is kept (not started yet, or gone). A stream cut
 * off (the service restarted, the connection dropped) is opened again from its last line, and a
 * service that does not answer is asked again for up to UNANSWERED_MS.
 */
async function streamLog(
  client: BoaClient,
  jobId: number,
  query: LogQuery,
  write: (text: string) => void,
  say: (line: string) => void,
): Promise<{ generation: number } | undefined> {
  let asked = query;
  let failingSince: number | undefined;
  for (;;) {
    try {
      const answer = await client.stream(
        `/v1/jobs/${jobId}/logs?${logQuery(asked)}`,
        write,
        (header) => {
          if (header('boa-log-gap') === 'true')
            say(
              `boa: the log of job ${jobId} no longer holds where this follow had got to (rotated away while it was cut off); going on from its newest line, lines between are missing`,
            );
        },
        'boa-generation',
        true,
      );
      const generation = Number(answer.header('boa-generation'));
      if (!answer.cut) return { generation };
      // Asked again from where it got to: where the text began, and the bytes that came.
      const cursor = answer.header('boa-log-cursor');
      // A connection that went silent (a NAT or proxy dropped it without a word) is one that broke off.
      const how = answer.silent === undefined ? 'broke off' : `sent nothing for ${answer.silent} s`;
      if (cursor !== undefined) {
        say(`boa: the log of job ${jobId} ${how}; following it again from where it was`);
        const skip = Number(answer.header('boa-log-skip') ?? 0) + answer.bytes;
        asked = { ...asked, generation, from: { cursor, skip } };
      } else {
        // A service from before cursors: its newest line is the best it can do.
        say(
          `boa: the log of job ${jobId} ${how}; following it again from its newest line (lines written meanwhile may be missing)`,
        );
        asked = { ...asked, tail: 1, generation };
      }
      failingSince = undefined;
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      if (error.body && /"code":"no_log"/.test(error.body)) {
        // A job that launches itself never has one: said at once, not waited for.
        if (/launches itself/.test(error.message)) throw error;
        return undefined;
      }
      if (!isTransient(error)) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > UNANSWERED_MS) throw followGivenUp(error, jobId);
      say(`boa: ${error.message}; trying again`);
    }
    await pause();
  }
}

/**
 * Waits until the job ends or runs a generation newer than `after`, saying on stderr what it waits for.
 */
async function nextGeneration(
  client: BoaClient,
  jobId: number,
  after: number,
  say: (line: string) => void,
  sayOnce: (generation: number, line: string) => void,
): Promise<JobView> {
  for (;;) {
    const job = await readJob(client, jobId);
    if (FINAL_STATES.has(job.state)) return job;
    const newer = job.generation > after;
    const backoff = restartLine(job);
    // (A generation in its restart's backoff is returned too: the job holds its GPUs, and its first
    // lines may come and go between two polls of a loaded machine. What is said of it is said once.)
    if (job.state === 'running' && newer && job.width > 0) {
      // Why the run before ended first, then how wide the one it now follows is (as `jobs wait` says
      // it), then its header: the header came before the reason (found in a trial).
      if (backoff) sayOnce(job.generation, backoff);
      sayOnce(job.generation, describeJob(job));
      return job;
    }
    if (backoff) sayOnce(job.generation, backoff);
    else say(describeJob(job));
    await pause();
  }
}

/** A job waiting out the backoff before a restart: what ended its run, and when it runs again. */
export function restartLine(job: JobView): string | undefined {
  if (job.restartNotBefore === null) return undefined;
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}`;
  const why = [code, job.failureReason].filter(Boolean).join(': ');
  const name = job.name ? ` (${job.name})` : '';
  // ISO UTC, as every other time the CLI prints: the machine's locale and zone are not the reader's.
  const at = when(job.restartNotBefore);
  return `job ${job.id}${name}: its run ended${why ? ` (${why})` : ''}; restart ${job.restarts} at ${at}`;
}

/** Whether the job has ended, for the hint's words; not known (a failed read): taken as not. */
async function jobEnded(client: BoaClient, jobId: number): Promise<boolean> {
  try {
    const { data } = await client.json<{ state: string }>('GET', `/v1/jobs/${jobId}`, undefined, undefined, [
      'state',
    ]);
    return FINAL_STATES.has(data.state);
  } catch {
    return false;
  }
}
