import type { BoaClient } from '../client.ts';
import { CliError } from '../errors.ts';

/**
 * How far back an earlier run with a log is looked for, one request each: generation numbers, not
 * kept logs (a job queued again gets a number with no run), so the hint says "in the 10 before it".
 */
const LOOKED_BACK = 10;
/** Said when none of those has a log: "no earlier run's log is kept" was untrue of older ones (found in review). */
const NONE_EARLIER = `no earlier run's log in the ${LOOKED_BACK} generations before it`;

/**
 * What `boa jobs logs` says on stderr when the log shown is empty. Its newest run (generation `shown`
 * past the first) not having written yet, between a crash and the restart's first line, read as "has
 * written nothing yet" although the runs before it had (found in a newcomer trial): it names the newest
 * earlier run with a log and the command that shows it.
 */
export async function nothingWrittenLine(
  client: BoaClient,
  jobId: number,
  rank: number,
  shown: number,
  named: boolean,
  ended = false,
): Promise<string> {
  const who = `job ${jobId}'s rank ${rank}`;
  if (named) return `${who} has written nothing in generation ${shown}`;
  // Of a job that ended, "yet" promised output that will never come (found in a newcomer trial).
  const yet = ended ? '' : ' yet';
  if (!(shown > 1)) return `${who} has written nothing${yet}`;
  const newest = ended
    ? `${who} wrote nothing in generation ${shown}, its last run`
    : `${who} has written nothing yet in generation ${shown}, its newest run (after a restart or rescale)`;
  const earlier = await newestEarlierLog(client, jobId, rank, shown);
  if (earlier === unknown) return newest;
  if (earlier === undefined) return `${newest}; ${NONE_EARLIER}`;
  return `${newest}; the run before it: ${logsCommand(jobId, rank, earlier)}`;
}

/**
 * What `boa jobs logs` says on stderr when it shows a generation past the first: which, and the newest
 * earlier one whose log is kept. Naming "1 to N-1" pointed at runs whose logs were gone (only the newest
 * 10 generations are kept; a job queued again gets a generation with no run) and called a rank's
 * newest log the job's newest run (found in review).
 */
export async function earlierRunsLine(client: BoaClient, jobId: number, rank: number, shown: number) {
  const here = `this is generation ${shown}, the newest with a log of rank ${rank} kept`;
  const earlier = await newestEarlierLog(client, jobId, rank, shown);
  if (earlier === unknown) return here;
  if (earlier === undefined) return `${here}; ${NONE_EARLIER}`;
  return `${here}; the newest run before it with a log: ${logsCommand(jobId, rank, earlier)}`;
}

function logsCommand(jobId: number, rank: number, generation: number): string {
  const rankOption = rank === 0 ? '' : ` --rank ${rank}`;
  return `boa jobs logs ${jobId}${rankOption} --generation ${generation}`;
}

/** The earlier generations could not be read (a 503, a dropped connection). */
const unknown = Symbol('unknown');

/**
 * The newest generation before `shown` whose log of this rank is kept; `unknown` if asking failed.
 * The hints are best-effort, said after the log went to stdout: a failed lookup failing the command
 * changed its exit code for scripts (found in review), so the hint is said without the earlier run.
 */
async function newestEarlierLog(
  client: BoaClient,
  jobId: number,
  rank: number,
  shown: number,
): Promise<number | undefined | typeof unknown> {
  for (let g = shown - 1; g >= Math.max(1, shown - LOOKED_BACK); g--) {
    const query = new URLSearchParams({ rank: String(rank), tail: '1', generation: String(g) });
    try {
      const { text } = await client.textAnswer('GET', `/v1/jobs/${jobId}/logs?${query}`);
      // A run that wrote nothing is no log to point at (a crash at start): look further back.
      if (text === '') continue;
      return g;
    } catch (error) {
      // None kept of that one (it never ran, or was pruned): look further back.
      if (error instanceof CliError && error.body && /"code":"no_log"/.test(error.body)) continue;
      return unknown;
    }
  }
  return undefined;
}
