import {
  LogCursorError,
  type Executor,
  type LogPosition,
  type ReplicaLog,
  type ReplicaLogFollow,
  type ReplicaLogQuery,
} from './ports.ts';
import { ServiceError } from './errors.ts';
import { nodesOf, type ServiceJob } from './jobs.ts';
import type { BoaService } from './service.ts';

export interface JobLogsQuery {
  readonly rank: number;
  readonly generation?: number;
  readonly tail: number;
  /** Followed from where a follower got to, not from the last lines. */
  readonly from?: LogPosition;
}

/**
 * The last lines a job's replica wrote, from the executor that runs it (its newest generation with a
 * log unless one is named). Refused for a service that runs no jobs, and when no log is kept.
 */
export async function jobLogs(
  service: BoaService,
  id: number,
  query: JobLogsQuery,
  token?: string,
): Promise<ReplicaLog> {
  return readLog(service, id, query, token, (executor, q) => executor.logs?.(q));
}

/** The same log followed: its last lines, then what the replica writes until it ends. */
export async function followJobLogs(
  service: BoaService,
  id: number,
  query: JobLogsQuery,
  signal: AbortSignal,
  token?: string,
): Promise<ReplicaLogFollow> {
  return readLog(service, id, query, token, (executor, q) => executor.followLog?.(q, signal));
}

async function readLog<T>(
  service: BoaService,
  id: number,
  query: JobLogsQuery,
  token: string | undefined,
  read: (executor: Executor, query: ReplicaLogQuery) => Promise<T | undefined> | undefined,
): Promise<T> {
  const job = service.job(id, token);
  const executor = service.deps.executor;
  if (!executor?.logs)
    throw new ServiceError(
      409,
      'no_executor',
      'this service runs no jobs (no executor), so it keeps no logs: a job that launches itself keeps its own',
    );
  if (!job.workload)
    throw new ServiceError(
      404,
      'no_log',
      `job ${job.id} launches itself (it was submitted without a command): boa does not run it and keeps no log of it`,
    );
  const log = await Promise.resolve(
    read(executor, {
      jobId: job.id,
      rank: query.rank,
      tailLines: query.tail,
      ...(query.generation !== undefined ? { generation: query.generation } : {}),
      ...(query.from !== undefined ? { from: query.from } : {}),
    }),
  ).catch((error: unknown) => {
    if (error instanceof LogCursorError)
      throw new ServiceError(400, 'bad_log_cursor', error.message, 'cursor');
    // The cloud's refusal or outage (e.g. RBAC without pods/log), said as it is rather than a bare 500.
    throw new ServiceError(
      503,
      'logs_unavailable',
      `reading job ${job.id}'s log failed: ${(error as Error).message}`,
    );
  });
  if (!log) {
    const which = query.generation !== undefined ? `generation ${query.generation}, ` : '';
    // A job never given GPUs has no log at all: say that, not every way a log can be missing.
    const ranks = nodesOf(job.allocation).length;
    // Only a job holding no GPUs (ended, or queued again) is counted: its logs are kept files, where a
    // running one's may be live pods, a request each.
    const kept = job.startedAt !== null && ranks === 0 ? await keptRanks(executor, job.id, query) : undefined;
    // An ended job's generation was moved on past its last run as it ended: a generation asked of it that
    // never ran is answered with the newest that did, not "its newest generation is N" that has no log.
    const lastRun =
      kept === undefined &&
      job.startedAt !== null &&
      ranks === 0 &&
      query.generation !== undefined &&
      !isActive(job)
        ? await newestLogged(executor, job.id, query.rank)
        : undefined;
    const why = missingLogReason(job, query, ranks, kept, lastRun);
    throw new ServiceError(
      404,
      'no_log',
      `job ${job.id} has no log kept for ${which}rank ${query.rank}: ${why}`,
    );
  }
  return log;
}

/** Why a job has no log kept for the rank (and generation) asked: the one reason known, else every way. */
function missingLogReason(
  job: ServiceJob,
  query: JobLogsQuery,
  ranks: number,
  kept: { generation: number; ranks: number } | undefined,
  lastRun: number | undefined,
): string {
  if (job.startedAt === null)
    return job.state === 'waiting'
      ? `it has not run yet (it waits for GPUs: boa jobs show ${job.id})`
      : `it never ran (${job.state} before it had GPUs)`;
  if (query.generation === undefined && ranks > 0 && query.rank >= ranks)
    return `it runs ${rankRange(ranks)} now (generation ${job.generation}; an older generation's: --generation)`;
  // A generation after an ended job's last run (its own generation included, moved on as it ended):
  // the run to ask for instead (found in a docs audit: "its newest generation is 2" had no log).
  if (query.generation !== undefined && lastRun !== undefined && query.generation > lastRun)
    return `it has ended (${job.state}), and generation ${lastRun} is its newest with a log of rank ${query.rank}`;
  // A generation past the job's newest: every way a log can be missing was listed (found in a CLI review).
  if (query.generation !== undefined && query.generation > job.generation) {
    return `its newest generation is ${job.generation}${isActive(job) ? ' (a later one begins at its next restart or rescale)' : `, and it has ended (${job.state})`}`;
  }
  if (kept)
    return (
      `generation ${kept.generation}${query.generation === undefined ? ', its newest with a log,' : ''} ` +
      `has the logs of ${rankRange(kept.ranks)}`
    );
  return (
    `the rank is not one of its replicas, it is older than the job's newest 10 generations (their logs ` +
    `are not kept), that generation has not started yet, or (Kubernetes) its pod went and boa kept no ` +
    `log of it`
  );
}

function isActive(job: ServiceJob): boolean {
  return job.state === 'waiting' || job.state === 'running';
}

/** The newest generation that kept a log of the rank, or undefined when none did or reading fails. */
async function newestLogged(executor: Executor, jobId: number, rank: number): Promise<number | undefined> {
  try {
    return (await executor.logs?.({ jobId, rank, tailLines: 1 }))?.generation;
  } catch {
    return undefined;
  }
}

function rankRange(ranks: number): string {
  return ranks === 1 ? 'rank 0 only' : `ranks 0 to ${ranks - 1}`;
}

/** Ranks are numbered from 0 without gaps; a generation has at most one replica per node. */
const MOST_RANKS_LOOKED_FOR = 256;

/**
 * The ranks whose logs the asked generation (or the newest one with rank 0's) keeps, for a rank asked
 * of it that has none: an ended job has no allocation to say how many replicas it ran. Undefined when
 * rank 0 has none either, or reading fails (the message then lists every way a log can be missing).
 */
async function keptRanks(
  executor: Executor,
  jobId: number,
  query: JobLogsQuery,
): Promise<{ generation: number; ranks: number } | undefined> {
  const read = (rank: number, generation: number | undefined) =>
    executor.logs?.({ jobId, rank, tailLines: 1, ...(generation !== undefined ? { generation } : {}) });
  try {
    if (query.rank === 0) return undefined;
    const first = await read(0, query.generation);
    if (!first) return undefined;
    let ranks = 1;
    while (ranks < Math.min(query.rank, MOST_RANKS_LOOKED_FOR) && (await read(ranks, first.generation)))
      ranks++;
    return { generation: first.generation, ranks };
  } catch {
    return undefined;
  }
}
