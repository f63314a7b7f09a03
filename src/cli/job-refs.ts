import { looksLikeJobId } from '../core/job-ref.ts';
import type { BoaClient } from './client.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { parseJobId } from './parse.ts';

interface NamedJob {
  id: number;
  state: string;
}

const ACTIVE = new Set(['waiting', 'running']);

/**
 * A job as the command line names it: a number is its id; anything else its exact name (`--name` at
 * submit), which must pick out one job, so a mistyped or reused name never acts on the wrong one: the
 * only job of that name, else the only waiting or running one (a name reused for a new run is that
 * run: `boa jobs wait first` after submitting "first" again). `active`: only waiting and running jobs
 * count (cancel).
 */
export async function resolveJobRef(client: BoaClient, ref: string, active = false): Promise<number> {
  // "-1", "0", "1.5" look like ids and are refused as ids, not looked up as names.
  if (looksLikeJobId(ref)) return parseJobId(ref.trim());
  if (ref === '') throw usageError('a job is named by its id or its name, got ""');
  const query = new URLSearchParams({ name: ref, limit: '10000' });
  const { data } = await client.json<{ jobs: NamedJob[] }>('GET', `/v1/jobs?${query}`, undefined, undefined, [
    'jobs',
  ]);
  const live = data.jobs.filter((j) => ACTIVE.has(j.state));
  const matches = active ? live : data.jobs;
  if (matches.length === 1) return matches[0]!.id;
  if (live.length === 1) return live[0]!.id;
  if (matches.length > 1) {
    const message = `${matches.length} ${active ? 'waiting or running ' : ''}jobs are named "${ref}": ${described(matches)}; give the id(s)`;
    throw new CliError(message, EXIT.badInput, errorBody('ambiguous_name', message));
  }
  const others = data.jobs.length > 0 ? ` (${described(data.jobs)})` : ' (see boa jobs list)';
  const message = `no ${active ? 'waiting or running ' : ''}job is named "${ref}"${others}`;
  throw new CliError(message, EXIT.failed, errorBody('not_found', message));
}

/** The API's error document, so --json prints the same shape for a name as for an id the service refused. */
function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** "job 3 is done, job 5 is running": the newest ten at most. */
function described(jobs: NamedJob[]): string {
  const shown = jobs.slice(-10).map((j) => `job ${j.id} is ${j.state}`);
  return `${jobs.length > 10 ? `${jobs.length - 10} older, ` : ''}${shown.join(', ')}`;
}
