import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import type { BoaClient } from '../client.ts';
import { contextOf } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { printable } from '../format.ts';
import { resolveJobRef } from '../job-refs.ts';
import { parseNumber } from '../parse.ts';
import { describeJob, FINAL_STATES } from './jobs-wait.ts';

type JobView = ReturnType<typeof jobView>;

/** The most lines a request gives: a newer generation's log is shown from its start, up to this. */
const WHOLE_LOG = 10_000;
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
      const jobId = await resolveJobRef(context.client, ref);
      if (options.follow) return followLogs(context.client, jobId, { rank, tail, generation });
      const query = logQuery({ rank, tail, generation });
      process.stdout.write(await context.client.text('GET', `/v1/jobs/${jobId}/logs?${query}`));
    });
}

interface LogQuery {
  rank: number;
  tail: number;
  generation: number | undefined;
  follow?: boolean;
}

function logQuery({ rank, tail, generation, follow }: LogQuery): URLSearchParams {
  const query = new URLSearchParams({ rank: String(rank), tail: String(tail) });
  if (generation !== undefined) query.set('generation', String(generation));
  if (follow) query.set('follow', 'true');
  return query;
}

/**
 * `kubectl logs -f` across a job's life: the replica's log as it is written; when that generation
 * ends (a restart, a rescale), the next one's from its start, each announced on stderr; until the job
 * ends, said on stderr as `jobs wait` says it. A generation named with --generation is followed alone.
 */
async function followLogs(client: BoaClient, jobId: number, first: LogQuery): Promise<void> {
  const write = (text: string) => void process.stdout.write(text);
  let shown: number | undefined;
  let said = '';
  const say = (line: string) => {
    if (line !== said) process.stderr.write(`${printable(line)}\n`);
    said = line;
  };
  let query: LogQuery = { ...first, follow: true };
  for (;;) {
    const streamed = await streamLog(client, jobId, query, write);
    if (streamed) {
      shown = streamed.generation;
      if (first.generation !== undefined) return;
      // A cut stream (the service restarted, the connection dropped) goes on from its last line,
      // shown again; an ended one waits for the next generation.
      if (streamed.cut) {
        say(
          `boa: the log of job ${jobId} broke off; following it again (lines written meanwhile may be missing)`,
        );
        await new Promise((wake) => setTimeout(wake, FOLLOW_POLL_MS));
        query = { ...query, tail: 1, generation: shown };
        continue;
      }
    } else if (first.generation !== undefined) {
      throw new CliError(`job ${jobId} has no log kept for generation ${first.generation}`, EXIT.failed);
    } else {
      // Not started yet (waiting, or its process or pod not up): asked again in a while.
      await new Promise((wake) => setTimeout(wake, FOLLOW_POLL_MS));
    }
    const job = await nextGeneration(client, jobId, shown, say);
    const final = FINAL_STATES.has(job.state);
    // Generations that ran and ended while it was asked after (a run shorter than a poll): shown whole.
    const last = final ? job.generation : job.generation - 1;
    for (let g = (shown ?? 0) + 1; shown !== undefined && g <= last; g++) {
      const text = await generationLog(client, jobId, first.rank, g);
      if (text === undefined) continue;
      say(`--- job ${jobId}, generation ${g} ---`);
      write(text);
      shown = g;
    }
    if (final) {
      // Its output, which `jobs wait` points to, was just shown.
      const ended = describeJob(job).replace(/; its output: .*$/, '');
      if (job.state !== 'done') throw new CliError(ended, EXIT.jobUnsuccessful);
      say(ended);
      return;
    }
    if (shown !== undefined) say(`--- job ${jobId}, generation ${job.generation} ---`);
    const tail = shown === undefined ? first.tail : WHOLE_LOG;
    query = { ...first, tail, generation: job.generation, follow: true };
  }
}

/** A generation's whole log (up to 10000 lines), not followed; undefined when none is kept. */
async function generationLog(
  client: BoaClient,
  jobId: number,
  rank: number,
  generation: number,
): Promise<string | undefined> {
  const query = logQuery({ rank, tail: WHOLE_LOG, generation });
  try {
    return await client.text('GET', `/v1/jobs/${jobId}/logs?${query}`);
  } catch (error) {
    if (error instanceof CliError && error.body && /"code":"no_log"/.test(error.body)) return undefined;
    throw error;
  }
}

/** Streams one generation's log; undefined when none is kept (not started yet, or gone). */
async function streamLog(
  client: BoaClient,
  jobId: number,
  query: LogQuery,
  write: (text: string) => void,
): Promise<{ generation: number; cut: boolean } | undefined> {
  try {
    const { headers, cut } = await client.stream(`/v1/jobs/${jobId}/logs?${logQuery(query)}`, write);
    return { generation: Number(headers.get('boa-generation')), cut };
  } catch (error) {
    if (error instanceof CliError && error.body && /"code":"no_log"/.test(error.body)) {
      // A job that launches itself never has one: said at once, not waited for.
      if (/launches itself/.test(error.message)) throw error;
      return undefined;
    }
    throw error;
  }
}

/**
 * Waits until the job ends or runs a generation newer than `shown` (any, when nothing was shown yet),
 * saying on stderr what it waits for.
 */
async function nextGeneration(
  client: BoaClient,
  jobId: number,
  shown: number | undefined,
  say: (line: string) => void,
): Promise<JobView> {
  for (;;) {
    const { data: job } = await client.json<JobView>('GET', `/v1/jobs/${jobId}`);
    if (FINAL_STATES.has(job.state)) return job;
    const newer = shown === undefined || job.generation > shown;
    if (job.state === 'running' && newer && job.width > 0) return job;
    say(describeJob(job));
    await new Promise((wake) => setTimeout(wake, FOLLOW_POLL_MS));
  }
}
