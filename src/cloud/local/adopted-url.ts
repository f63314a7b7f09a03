import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { type PidRecord, readUrlFile, recordFile, writeUrlFile } from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';

/**
 * The address an adopted replica reports to: the one its BOA_URL_FILE names (boa's job clients move to
 * it), else the BOA_URL it was started with: its pid record's, or for one recorded before boa kept it
 * there, its supervisor's environment (Linux; `pid` only when it is our supervisor). Unknown else.
 */
export function reportedUrl(
  dir: string,
  rank: number,
  record: PidRecord,
  pid: number | undefined,
): string | undefined {
  const told = readUrlFile(dir, rank);
  if (told) return told;
  if (record.boaUrl !== undefined || pid === undefined) return record.boaUrl;
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((v) => v.startsWith('BOA_URL='))?.slice('BOA_URL='.length);
  } catch {
    return undefined; // no /proc (macOS), or gone meanwhile
  }
}

/**
 * At start, running replicas that report to another address than the service's now (it was restarted
 * on another --port or --public-url) are told the new one in their BOA_URL_FILE, which boa's job
 * clients re-read when the old one stops answering. One warning names them all the same: a job with a
 * client of its own reads BOA_URL only. Replicas that cannot be told (started before boa gave them the
 * file, or the file could not be written) get today's warning: their progress, checkpoints and
 * completion go to the old address until their job's next generation, which gets the new one. None is
 * restarted for it: that would cost their work since the last checkpoint.
 */
export function tellMovedUrl(
  replicas: readonly LocalReplica[],
  serviceUrl: string | undefined,
  logger: Logger,
): void {
  if (serviceUrl === undefined) return;
  const moved = replicas.filter((r) => r.alive && r.boaUrl !== undefined && r.boaUrl !== serviceUrl);
  const told: LocalReplica[] = [];
  const untold: LocalReplica[] = [];
  for (const replica of moved) {
    if (!existsSync(recordFile(replica.dir, replica.rank, 'url'))) {
      untold.push(replica); // started without BOA_URL_FILE: nothing of it re-reads an address
      continue;
    }
    try {
      writeUrlFile(replica.dir, replica.rank, serviceUrl);
      told.push(replica);
    } catch (error) {
      logger.warn(
        { event: 'replica_url_file_failed', jobId: replica.jobId, rank: replica.rank, error: String(error) },
        "a running replica's BOA_URL_FILE could not be rewritten with the service's new address",
      );
      untold.push(replica);
    }
  }
  if (told.length > 0) {
    const { jobs, was, one } = named(told);
    logger.warn(
      { event: 'replica_url_moved', jobs, was, now: serviceUrl, told: true },
      `running job${one ? '' : 's'} ${jobs.join(', ')} ${one ? 'was' : 'were'} started with BOA_URL ` +
        `${was.join(', ')}, not ${serviceUrl}: told the new address in ${one ? 'its' : 'their'} ` +
        "BOA_URL_FILE, which boa's job clients re-read when the old one stops answering (a job " +
        'with a client of its own reports to the old address until its next generation)',
    );
  }
  if (untold.length > 0) {
    const { jobs, was, one } = named(untold);
    logger.warn(
      { event: 'replica_url_moved', jobs, was, now: serviceUrl, told: false },
      `running job${one ? '' : 's'} ${jobs.join(', ')} report${one ? 's' : ''} ` +
        `to BOA_URL ${was.join(', ')}, not ${serviceUrl}: ${one ? 'its' : 'their'} progress ` +
        `is not seen until ${one ? 'its' : 'their'} next generation, which gets the new address ` +
        '(or restart boa at the old one)',
    );
  }
  // What they report to now, should the service move again before they end.
  for (const replica of told) replica.boaUrl = serviceUrl;
}

function named(replicas: readonly LocalReplica[]) {
  const jobs = [...new Set(replicas.map((r) => r.jobId))].sort((a, b) => a - b);
  const was = [...new Set(replicas.map((r) => r.boaUrl as string))];
  return { jobs, was, one: jobs.length === 1 };
}
