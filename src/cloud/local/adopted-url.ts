import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { PidRecord } from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';

/**
 * The BOA_URL an adopted replica was started with: its pid record's, or for one recorded before boa kept
 * it there, its supervisor's environment (Linux; `pid` only when it is our supervisor). Unknown else.
 */
export function startedUrl(record: PidRecord, pid: number | undefined): string | undefined {
  if (record.boaUrl !== undefined || pid === undefined) return record.boaUrl;
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((v) => v.startsWith('BOA_URL='))?.slice('BOA_URL='.length);
  } catch {
    return undefined; // no /proc (macOS), or gone meanwhile
  }
}

/**
 * One warning at start when running replicas were told another BOA_URL than the service's now (it was
 * restarted on another --port or --public-url): their progress, checkpoints and completion go to the old
 * address until their job's next generation, which gets the new one. They are not restarted for it: that
 * would cost their work since the last checkpoint, and starting the service at the old address again
 * is the operator's choice to make.
 */
export function warnMovedUrl(
  replicas: readonly LocalReplica[],
  serviceUrl: string | undefined,
  logger: Logger,
): void {
  if (serviceUrl === undefined) return;
  const moved = replicas.filter((r) => r.alive && r.boaUrl !== undefined && r.boaUrl !== serviceUrl);
  if (moved.length === 0) return;
  const jobs = [...new Set(moved.map((r) => r.jobId))].sort((a, b) => a - b);
  const was = [...new Set(moved.map((r) => r.boaUrl as string))];
  logger.warn(
    { event: 'replica_url_moved', jobs, was, now: serviceUrl },
    `running job${jobs.length === 1 ? '' : 's'} ${jobs.join(', ')} report${jobs.length === 1 ? 's' : ''} ` +
      `to BOA_URL ${was.join(', ')}, not ${serviceUrl}: ${jobs.length === 1 ? 'its' : 'their'} progress ` +
      `is not seen until ${jobs.length === 1 ? 'its' : 'their'} next generation, which gets the new address ` +
      '(or restart boa at the old one)',
  );
}
